package discovery

import (
	"fmt"
	"strconv"
	"strings"
)

// part is one token of a URI spec: a literal, or a variable's name.
type part struct {
	Value    string `json:"value"`
	Variable bool   `json:"variable"`
}

// parseSpec splits a URI spec as Curator's UriSpec does: text between braces is a
// variable (trimmed), the rest literal; empty literals are dropped, nested or
// unbalanced braces are an error.
func parseSpec(spec string) ([]part, error) {
	var parts []part
	inside := false
	for spec != "" {
		i := strings.IndexAny(spec, "{}")
		if i < 0 {
			i = len(spec)
		}
		if i > 0 {
			tok := spec[:i]
			if inside {
				tok = strings.TrimSpace(tok)
			}
			parts = append(parts, part{Value: tok, Variable: inside})
			spec = spec[i:]
			continue
		}
		switch spec[0] {
		case '{':
			if inside {
				return nil, fmt.Errorf("URI spec: %q inside a variable", "{")
			}
			inside = true
		case '}':
			if !inside {
				return nil, fmt.Errorf("URI spec: %q without %q before it", "}", "{")
			}
			inside = false
		}
		spec = spec[1:]
	}
	if inside {
		return nil, fmt.Errorf("URI spec: the last variable is not closed by %q", "}")
	}
	return parts, nil
}

// specString writes parts back as a template: the inverse of parseSpec, up to the
// spaces it trims.
func specString(parts []part) string {
	var b strings.Builder
	for _, p := range parts {
		if p.Variable {
			b.WriteString("{" + p.Value + "}")
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String()
}

// URI fills in the instance's URISpec as Curator's UriSpec.build does: {scheme} is
// "https" when the instance has an SSL port and "http" otherwise; {name}, {id},
// {address}, {port}, {ssl-port}, {registration-time-utc} (milliseconds) and
// {service-type} (lower case) are the instance's, an unset port empty; {[} and {]}
// are literal braces; any other variable is empty. An empty URISpec gives "".
func (in Instance) URI() (string, error) {
	parts, err := parseSpec(in.URISpec)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	vars := map[string]string{
		"[": "{", "]": "}", "scheme": "http",
		"name": in.Name, "id": in.ID, "address": in.Address,
		"port": portString(in.Port), "ssl-port": portString(in.SSLPort),
		"registration-time-utc": strconv.FormatInt(millis(in.Registered), 10),
		"service-type":          strings.ToLower(in.Type.String()),
	}
	if in.SSLPort != 0 {
		vars["scheme"] = "https"
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Variable {
			b.WriteString(vars[p.Value])
		} else {
			b.WriteString(p.Value)
		}
	}
	return b.String(), nil
}

func portString(port int) string {
	if port == 0 {
		return ""
	}
	return strconv.Itoa(port)
}
