package main

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
)

// A query parameter is read only if its endpoint names it, once, with a value of
// its kind; anything else is a 400 that says what was wrong, before any work. A
// number is a decimal from 0 to uiNumberMax, and pages are cut by slicing that
// cannot overflow (cut): no value reaches an index unchecked.
const uiNumberMax = 999_999_999

// uiQuery is an endpoint's query, checked against the parameters it takes.
type uiQuery struct {
	v url.Values
}

// checkQuery accepts q when it names only the parameters given (and the token,
// which the guard reads), each at most once.
func checkQuery(q url.Values, names ...string) (uiQuery, error) {
	for name, vs := range q {
		if name != uiTokenParam && !slices.Contains(names, name) {
			return uiQuery{}, fmt.Errorf("%w: unknown parameter %q", errUIQuery, name)
		}
		if len(vs) > 1 {
			return uiQuery{}, fmt.Errorf("%w: %s given %d times", errUIQuery, name, len(vs))
		}
	}
	return uiQuery{q}, nil
}

// number is the parameter name as a count of 0 or more, def when absent.
func (q uiQuery) number(name string, def int) (int, error) {
	s, ok := q.v[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s[0])
	if err != nil || n < 0 || n > uiNumberMax {
		return 0, fmt.Errorf("%w: %s wants a number from 0 to %d, not %q", errUIQuery, name, uiNumberMax, s[0])
	}
	return n, nil
}

// uiPage says which part of a list an answer holds: from offset, at most the
// limit asked for, of total.
type uiPage struct {
	Total  int `json:"total"`
	Offset int `json:"offset"`
}

// cut is s[offset:offset+limit], clipped to s, for any offset and limit of 0 or
// more: the sum is never computed, so it cannot overflow.
func cut[T any](s []T, offset, limit int) []T {
	lo := min(offset, len(s))
	return s[lo : lo+min(limit, len(s)-lo)]
}
