package apicheck

import (
	"regexp"
	"strings"
	"testing"
)

// closeMethod and optionType match the lines that the contract in framework's
// package documentation speaks of: a Close method, an Option type.
var (
	closeMethod = regexp.MustCompile(`^pkg ([^,]+), method \(\*?(\w+)\) Close\((.*)$`)
	optionType  = regexp.MustCompile(`^pkg ([^,]+), type (\w*Option) (.*)$`)
)

// Every recipe's Close takes a context and returns an error, and every Option of
// the recipes and the framework is a func(*options) error (framework's package
// documentation, "The contract every package of the module keeps"). The Client's
// Close() error and zktest's test servers are the exceptions it names.
func TestContract(t *testing.T) {
	lines, err := moduleAPI()
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range contractProblems(lines) {
		t.Error(problem)
	}
}

func contractProblems(lines []string) []string {
	var problems []string
	for _, l := range lines {
		if m := closeMethod.FindStringSubmatch(l); m != nil {
			pkg, typ, rest := m[1], m[2], m[3]
			exempt := strings.HasSuffix(pkg, "/zktest") || (strings.HasSuffix(pkg, "/framework") && typ == "Client")
			if !exempt && rest != "context.Context) error" {
				problems = append(problems, "Close must be Close(ctx context.Context) error: "+l)
			}
		}
		// A request's options (framework's CreateOption, DeleteOption) only set flags,
		// which the request checks together.
		if m := optionType.FindStringSubmatch(l); m != nil && !strings.HasSuffix(m[1], "/zktest") &&
			(!strings.HasSuffix(m[1], "/framework") || m[2] == "Option") {
			if !regexp.MustCompile(`^func\(\*\w+\) error$`).MatchString(m[3]) {
				problems = append(problems, "an Option must be a func(*options) error: "+l)
			}
		}
	}
	return problems
}

func TestContractProblems(t *testing.T) {
	got := contractProblems([]string{
		"pkg example.com/m/recipes/a, method (*Cache) Close() error",
		"pkg example.com/m/recipes/a, method (*Latch) Close(context.Context) error",
		"pkg example.com/m/framework, method (*Client) Close() error",
		"pkg example.com/m/zktest, method (*Server) Close() error",
		"pkg example.com/m/recipes/a, type Option func(*options)",
		"pkg example.com/m/recipes/a, type ProviderOption func(*providerOptions) error",
		"pkg example.com/m/framework, type CreateOption func(*createOptions)",
	})
	if len(got) != 2 || !strings.Contains(got[0], "Cache") || !strings.Contains(got[1], "func(*options)") {
		t.Errorf("problems: %q", got)
	}
}
