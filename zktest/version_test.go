package zktest

import (
	"archive/zip"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each installed version serves, and says so itself: a 3.9 server whose class path let
// 3.8's jute or server classes in first would report 3.8.0, or not start.
func TestEachInstalledVersionServes(t *testing.T) {
	versions := InstalledVersions()
	require.NotEmpty(t, versions)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			srv := NewServer(t, WithZooKeeper(v))
			require.Equal(t, v, srv.Version(), "the version the server reports")
			t.Logf("ZooKeeper %s serves at %s", srv.Version(), srv.Addr())
		})
	}
}

// A server that runs another version than its jars' name fails its start: here the
// jars named 9.9.9 are 3.8.0's, as a class path with the wrong jars first would be.
func TestAnotherVersionOnTheClassPathFailsTheStart(t *testing.T) {
	real, err := chooseInstallation(InstalledVersions()[0])
	require.NoError(t, err)
	dir := t.TempDir()
	for _, name := range []string{"zookeeper", "zookeeper-jute"} {
		require.NoError(t, os.Symlink(real.jar(name), filepath.Join(dir, name+"-9.9.9.jar")))
	}
	_, err = StartServer(context.Background(), WithZooKeeper(dir))
	require.ErrorContains(t, err, `reports ZooKeeper "`+real.version+`", but was started from 9.9.9's jars`)
}

func TestChooseZooKeeper(t *testing.T) {
	t.Setenv(envZooKeeper, "")
	newest, err := chooseInstallation("")
	require.NoError(t, err)
	require.Equal(t, InstalledVersions()[0], newest.version, "the default is the newest")

	for _, v := range InstalledVersions() {
		major, _, _ := strings.Cut(v[strings.Index(v, ".")+1:], ".")
		prefix := v[:strings.Index(v, ".")] + "." + major // "3.9.6" -> "3.9"
		// A line's prefix chooses its newest release installed (3.9.6 over 3.9.3), the
		// first of InstalledVersions, newest first, that it names.
		newestOfLine := InstalledVersions()[slices.IndexFunc(InstalledVersions(), func(w string) bool { return strings.HasPrefix(w, prefix+".") })]
		t.Setenv(envZooKeeper, prefix)
		in, err := chooseInstallation("")
		require.NoError(t, err)
		require.Equal(t, newestOfLine, in.version, "%s=%s", envZooKeeper, prefix)

		t.Setenv(envZooKeeper, v)
		in, err = chooseInstallation("")
		require.NoError(t, err)
		require.Equal(t, v, in.version, "%s=%s", envZooKeeper, v)

		t.Setenv(envZooKeeper, in.dir)
		in, err = chooseInstallation("")
		require.NoError(t, err)
		require.Equal(t, v, in.version, "%s=<its directory>", envZooKeeper)
	}

	_, err = chooseInstallation("2.0")
	require.ErrorIs(t, err, ErrNotInstalled)
	require.ErrorContains(t, err, "no ZooKeeper 2.0 among")
	_, err = chooseInstallation("3.1") // not a prefix of 3.10 either
	require.ErrorIs(t, err, ErrNotInstalled)
}

func TestCompareVersions(t *testing.T) {
	require.Negative(t, compareVersions("3.9.3", "3.10.0"))
	require.Positive(t, compareVersions("3.9.3", "3.8.0"))
	require.Positive(t, compareVersions("3.9.6", "3.9.3"))
	require.Zero(t, compareVersions("3.9", "3.9.0"))
}

// The server's own version says nothing of its jute classes (a 3.9.3 server runs, and
// says 3.9.3, with 3.8.0's jute first; 3.9.6's the same), so the class path is checked as the JVM reads
// it: every version's jute and server classes come from its own jars.
func TestClassPathFindsTheChosenJarsFirst(t *testing.T) {
	for _, v := range InstalledVersions() {
		in, err := chooseInstallation(v)
		require.NoError(t, err)
		order := jvmOrder(t, in.classPath())
		require.Equal(t, in.jar("zookeeper-jute"), firstHolding(t, order, "org/apache/jute/Record.class"), v)
		require.Equal(t, in.jar("zookeeper"), firstHolding(t, order, "org/apache/zookeeper/Version.class"), v)
	}
}

// jvmOrder is the order in which the JVM searches the jars of a class path: each jar's
// manifest Class-Path right after the jar (depth first), every jar once.
func jvmOrder(t *testing.T, classPath string) []string {
	var order []string
	seen := map[string]bool{}
	var visit func(jar string)
	visit = func(jar string) {
		if seen[jar] || !fileExists(jar) {
			return
		}
		seen[jar] = true
		order = append(order, jar)
		for _, next := range manifestClassPath(t, jar) {
			if !filepath.IsAbs(next) {
				next = filepath.Join(filepath.Dir(jar), next)
			}
			visit(next)
		}
	}
	for _, jar := range strings.Split(classPath, ":") {
		visit(jar)
	}
	return order
}

func manifestClassPath(t *testing.T, jar string) []string {
	z, err := zip.OpenReader(jar)
	require.NoError(t, err)
	defer z.Close()
	f, err := z.Open("META-INF/MANIFEST.MF")
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	// A manifest's long values go on in lines that start with one space.
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n ", "")
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, "Class-Path:"); ok {
			return strings.Fields(v)
		}
	}
	return nil
}

func firstHolding(t *testing.T, jars []string, class string) string {
	for _, jar := range jars {
		z, err := zip.OpenReader(jar)
		require.NoError(t, err)
		_, err = fs.Stat(z, class)
		z.Close()
		if err == nil {
			return jar
		}
	}
	return ""
}
