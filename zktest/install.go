package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Debian's packages install their jars here: bookworm's ZooKeeper 3.8 and the libraries
// every version's server needs (slf4j, Netty, Jackson, metrics), whichever version runs.
const javaDir = "/usr/share/java"

// envZooKeeper chooses the servers' version when no WithZooKeeper does: a version
// ("3.9", "3.8.0") or the directory of a ZooKeeper's jars.
const envZooKeeper = "ZKTEST_ZOOKEEPER"

const installHint = "install it with `make deps` (or: apt-get update && apt-get install -y --no-install-recommends zookeeper)"

// ErrNotInstalled is returned when no ZooKeeper, or not the version asked for, is
// installed.
var ErrNotInstalled = errors.New("zktest: ZooKeeper is not installed")

// installation is one ZooKeeper's jars: zookeeper-<version>.jar and
// zookeeper-jute-<version>.jar in dir.
type installation struct {
	dir     string
	version string // from the jars' names, "3.9.6"
}

// searchDirs are where zktest looks for ZooKeeper's jars: what scripts/deps.sh unpacks
// from a newer Debian suite into this repository's build/deps/<suite>, found from this
// file's place (`make deps`: forky's 3.9.6; `scripts/deps.sh trixie` adds 3.9.3), then
// Debian's installed package (bookworm: 3.8).
func searchDirs() []string {
	var dirs []string
	if _, here, _, ok := runtime.Caller(0); ok {
		suites, _ := filepath.Glob(filepath.Join(filepath.Dir(here), "..", "build", "deps", "*", "root", "usr", "share", "java"))
		slices.Sort(suites)
		dirs = append(dirs, suites...)
	}
	return append(dirs, javaDir)
}

// findInstallation reads the version from the jars' names in dir.
func findInstallation(dir string) (installation, error) {
	jars, _ := filepath.Glob(filepath.Join(dir, "zookeeper-[0-9]*.jar"))
	if len(jars) != 1 {
		return installation{}, fmt.Errorf("%w: %s holds %d zookeeper-<version>.jar, not one: %s", ErrNotInstalled, dir, len(jars), installHint)
	}
	version := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(jars[0]), "zookeeper-"), ".jar")
	in := installation{dir: dir, version: version}
	if !fileExists(in.jar("zookeeper-jute")) {
		return installation{}, fmt.Errorf("%w: %s has no zookeeper-jute-%s.jar", ErrNotInstalled, dir, version)
	}
	return in, nil
}

func (in installation) jar(name string) string {
	return filepath.Join(in.dir, name+"-"+in.version+".jar")
}

// installed lists the ZooKeepers found in searchDirs, newest first, each version once
// (two suites may package the same one).
func installed() []installation {
	var found []installation
	for _, dir := range searchDirs() {
		in, err := findInstallation(dir)
		if err == nil && !slices.ContainsFunc(found, func(f installation) bool { return f.version == in.version }) {
			found = append(found, in)
		}
	}
	slices.SortStableFunc(found, func(a, b installation) int { return compareVersions(b.version, a.version) })
	return found
}

// InstalledVersions are the ZooKeeper versions WithZooKeeper can choose from, newest
// first, as their jars name them ("3.9.6").
func InstalledVersions() []string {
	var versions []string
	for _, in := range installed() {
		versions = append(versions, in.version)
	}
	return versions
}

// chooseInstallation finds the jars that want names: a directory (it holds a '/'), a
// version or its prefix ("3.9" is the newest 3.9.x installed), or "" for
// $ZKTEST_ZOOKEEPER, else the newest.
func chooseInstallation(want string) (installation, error) {
	if want == "" {
		want = strings.TrimSpace(os.Getenv(envZooKeeper))
	}
	if strings.Contains(want, "/") {
		return findInstallation(want)
	}
	found := installed()
	if len(found) == 0 {
		return installation{}, fmt.Errorf("%w (no zookeeper-<version>.jar in %s): %s", ErrNotInstalled, strings.Join(searchDirs(), " or "), installHint)
	}
	if want == "" {
		return found[0], nil
	}
	for _, in := range found {
		if in.version == want || strings.HasPrefix(in.version, want+".") {
			return in, nil
		}
	}
	return installation{}, fmt.Errorf("%w: no ZooKeeper %s among %s (make deps fetches 3.9.6 and installs 3.8.0; scripts/deps.sh trixie fetches 3.9.3)", ErrNotInstalled, want, strings.Join(InstalledVersions(), ", "))
}

// classPath puts the chosen version's jute and server jars first, in that order: the
// JVM searches a jar's manifest Class-Path right after the jar, and forky's (and
// trixie's) server jar names bookworm's /usr/share/java/zookeeper-jute.jar, so a 3.9
// server jar ahead of its own jute jar would run with 3.8's wire classes. The rest are bookworm's (a server log
// through slf4j-simple, and the Netty pieces TLS needs that the manifests omit); the
// server jar's manifest brings the others.
func (in installation) classPath() string {
	jars := []string{in.jar("zookeeper-jute"), in.jar("zookeeper")}
	for _, name := range []string{"slf4j-simple", "netty-codec", "netty-resolver", "netty-transport-native-unix-common"} {
		if jar := filepath.Join(javaDir, name+".jar"); fileExists(jar) {
			jars = append(jars, jar)
		}
	}
	return strings.Join(jars, ":")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// compareVersions orders dotted versions by their numbers: "3.10.0" after "3.9.6".
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// lookJava finds the java that runs the servers.
func lookJava() (string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("%w: no java on PATH: %s", ErrNotInstalled, installHint)
	}
	return java, nil
}
