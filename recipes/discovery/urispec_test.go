package discovery

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Curator's TestUriSpec cases, and its default template.
func TestURI(t *testing.T) {
	in := Instance{Name: "foo", ID: "x", Port: 5}
	in.URISpec = "{scheme}://foo.com"
	requireURI(t, "http://foo.com", in)
	in.SSLPort = 5
	requireURI(t, "https://foo.com", in)

	in = Instance{Address: "1.2.3.4", Name: "foo", ID: "bar", Port: 5, SSLPort: 6,
		Registered: time.UnixMilli(789), Type: Permanent,
		URISpec: "{scheme}://{address}:{port}:{ssl-port}/{name}/{id}/{registration-time-utc}/{service-type}"}
	requireURI(t, "https://1.2.3.4:5:6/foo/bar/789/permanent", in)

	in = Instance{URISpec: "{one}two-three-{[}four{]}-five{ six }{}"}
	requireURI(t, "two-three-{four}-five", in)
	in = Instance{Address: "h", URISpec: "{scheme}://{address}:{port}"}
	requireURI(t, "http://h:", in)
	requireURI(t, "", Instance{})
}

func requireURI(t *testing.T, want string, in Instance) {
	t.Helper()
	got, err := in.URI()
	require.NoError(t, err)
	require.Equal(t, want, got, in.URISpec)
}

func TestParseSpec(t *testing.T) {
	parts, err := parseSpec("{one}{two}three-four-five{six}seven{eight}")
	require.NoError(t, err)
	require.Equal(t, []part{{"one", true}, {"two", true}, {"three-four-five", false}, {"six", true},
		{"seven", false}, {"eight", true}}, parts)
	require.Equal(t, "{one}{two}three-four-five{six}seven{eight}", specString(parts))
	for _, bad := range []string{"{a{b}}", "a}", "{a", "}{"} {
		_, err := parseSpec(bad)
		require.Error(t, err, bad)
		_, err = Instance{URISpec: bad}.URI()
		require.ErrorIs(t, err, ErrInvalid, bad)
	}
}
