package driver

import (
	"fmt"
	"math"
	"strings"
)

// The goals of issue 36 for the followers of state on persistent watches, checked
// against the scale curves' counts: every per-change cost flat (the largest size at
// most 1.5× the smallest), requests per change no more than Curator's, and the
// cache's heap per node no more than CuratorCache's. The verdicts are zkrecipes';
// the one-shot contender's and Curator's figures are shown beside them.

// flatGoal is the most the largest size's figure may be, as a multiple of the
// smallest's.
const flatGoal = 1.5

// perChangeFigures are the per-change figures, by recipe, in the report's order.
var perChangeFigures = []struct{ recipe, id string }{
	{"cache", "change-requests"}, {"cache", "change-bytes"},
	{"group", "requests"}, {"group", "follower-requests"}, {"group", "bytes"},
	{"discovery", "requests"}, {"discovery", "follower-requests"}, {"discovery", "bytes"},
}

// requestGoals are the requests per change compared with Curator's: the
// followers' (the cache's writes are not counted in its figure; the group's joiner
// and discovery's registrar make the change, as those writes do).
var requestGoals = []struct{ recipe, id string }{{"cache", "change-requests"}, {"group", "follower-requests"}, {"discovery", "follower-requests"}}

// requestReferences are compared with Curator's too, for the reader, with no
// verdict: the whole of a round, the changing session's requests included.
var requestReferences = []struct{ recipe, id string }{{"group", "requests"}, {"discovery", "requests"}, {"discovery", "changer-requests"}}

// GoalVerdict is one goal checked on one figure.
type GoalVerdict struct {
	Goal, Recipe, Figure string
	Cells                map[string]string // by contender
	Pass, Known          bool              // Known: there were numbers to judge
	Reference            bool              // shown beside the goals, not one of them
}

// values is contender's figure id of recipe, by size, smallest first.
func (r *ScaleReport) values(recipe, contender, id string) (sizes []int, labels []string, vs []float64) {
	_, bySize := r.series(recipe)
	for _, p := range bySize[contender] {
		if v, ok := p.Figures[id]; ok && !math.IsNaN(v) {
			sizes, labels, vs = append(sizes, p.Size), append(labels, p.Label), append(vs, v)
		}
	}
	return sizes, labels, vs
}

func figureLabel(recipe, id string) string {
	for _, f := range scaleFigures {
		if f.recipe == recipe && f.id == id {
			return f.label
		}
	}
	return id
}

// Goals checks issue 36's goals on the report's points.
func (r *ScaleReport) Goals() []GoalVerdict {
	var out []GoalVerdict
	contenders := []string{recipesName, oneShotName, curatorName}
	for _, pc := range perChangeFigures {
		g := GoalVerdict{Goal: fmt.Sprintf("flat: largest size ≤ %.1f× the smallest", flatGoal), Recipe: pc.recipe,
			Figure: figureLabel(pc.recipe, pc.id), Cells: map[string]string{}}
		for _, c := range contenders {
			_, labels, vs := r.values(pc.recipe, c, pc.id)
			if len(vs) < 2 {
				continue
			}
			first, last := vs[0], vs[len(vs)-1]
			ratio := last / first
			g.Cells[c] = fmt.Sprintf("%s at %s → %s at %s (%s×)", formatScale(first), labels[0], formatScale(last), labels[len(labels)-1], formatScale(ratio))
			if c == recipesName {
				g.Known, g.Pass = true, ratio <= flatGoal
			}
		}
		out = append(out, g)
	}
	for _, rg := range requestGoals {
		out = append(out, r.againstCurator("requests per change ≤ Curator's, at every size", rg.recipe, rg.id, contenders, 0))
	}
	out = append(out, r.againstCurator("cache heap per node ≤ CuratorCache's, at every size", "cache", "heap", contenders, 1))
	for _, rr := range requestReferences {
		g := r.againstCurator("for reference, not a goal: requests ≤ Curator's, the changing session's included", rr.recipe, rr.id, contenders, 0)
		g.Reference = true
		out = append(out, g)
	}
	return out
}

// againstCurator checks that each contender's figure is at most Curator's at every
// size both have (Curator's readings below least, the JVM's heap at a small size,
// are no reading), in hundredths.
func (r *ScaleReport) againstCurator(goal, recipe, id string, contenders []string, least float64) GoalVerdict {
	g := GoalVerdict{Goal: goal, Recipe: recipe, Figure: figureLabel(recipe, id), Cells: map[string]string{}}
	cs, cl, cv := r.values(recipe, curatorName, id)
	curators := map[int]float64{}
	var unread []string
	for i, s := range cs {
		if cv[i] < least {
			unread = append(unread, fmt.Sprintf("%s at %s", formatScale(cv[i]), cl[i]))
			continue
		}
		curators[s] = cv[i]
	}
	for _, c := range contenders {
		sizes, labels, vs := r.values(recipe, c, id)
		if c == curatorName {
			var parts []string
			for i := range vs {
				parts = append(parts, formatScale(vs[i]))
			}
			if len(parts) > 0 {
				g.Cells[c] = strings.Join(parts, ", ") + " (" + strings.Join(cl, ", ") + ")"
				if len(unread) > 0 {
					g.Cells[c] += "; no reading: " + strings.Join(unread, ", ")
				}
			}
			continue
		}
		compared, within := 0, 0
		worst, worstAt, worstV, worstC := math.Inf(-1), "", 0.0, 0.0
		for i, s := range sizes {
			cur, ok := curators[s]
			if !ok {
				continue
			}
			compared++
			if math.Round(100*vs[i]) <= math.Round(100*cur) {
				within++
			}
			if ratio := vs[i] / cur; ratio > worst {
				worst, worstAt, worstV, worstC = ratio, labels[i], vs[i], cur
			}
		}
		if compared == 0 {
			continue
		}
		g.Cells[c] = fmt.Sprintf("≤ at %d of %d sizes; most %s against %s at %s (%s×)", within, compared, formatScale(worstV), formatScale(worstC), worstAt, formatScale(worst))
		if c == recipesName {
			g.Known, g.Pass = true, within == compared
		}
	}
	return g
}

// goalsMarkdown is the goals' section of the report, or "" when no point bears on them.
func (r *ScaleReport) goalsMarkdown() string {
	goals := r.Goals()
	var rows [][]string
	for _, g := range goals {
		if len(g.Cells) == 0 {
			continue
		}
		verdict := "no figures"
		switch {
		case g.Reference && g.Known && g.Pass:
			verdict = "(≤)"
		case g.Reference && g.Known:
			verdict = "(more)"
		case g.Known && g.Pass:
			verdict = "**pass**"
		case g.Known:
			verdict = "**FAIL**"
		}
		row := []string{g.Goal, g.Recipe + ": " + g.Figure, verdict}
		for _, c := range []string{recipesName, oneShotName, curatorName} {
			cell := g.Cells[c]
			if cell == "" {
				cell = "—"
			}
			row = append(row, cell)
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Goals (issue 36)\n\n")
	b.WriteString("Checked by the driver on the counts below, for zkrecipes on persistent watches (its verdict); the one-shot mode's and Curator's figures beside it. " +
		"A figure is compared in hundredths, as the tables show it.\n\n")
	b.WriteString(markdownTableLeft([]string{"goal", "figure", "zkrecipes verdict", recipesName, oneShotName, curatorName}, rows))
	return b.String()
}

// markdownTableLeft is a table whose columns are all left-aligned (text, not numbers).
func markdownTableLeft(header []string, rows [][]string) string {
	var b strings.Builder
	line := func(cells []string) { b.WriteString("| " + strings.Join(cells, " | ") + " |\n") }
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	line(sep)
	for _, r := range rows {
		line(r)
	}
	return b.String()
}
