package zktest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Debian's zookeeper package installs the server's jars here; zookeeper.jar's manifest
// brings its dependencies, and slf4j-simple gives the server a log.
const javaDir = "/usr/share/java"

var classPath = []string{
	javaDir + "/zookeeper.jar",
	javaDir + "/slf4j-simple.jar",
	// The secure client port needs Netty pieces that zookeeper.jar's manifest omits.
	javaDir + "/netty-codec.jar",
	javaDir + "/netty-resolver.jar",
}

const installHint = "install it with `make deps` (or: apt-get update && apt-get install -y --no-install-recommends zookeeper)"

// checkInstalled says exactly what is missing and how to install it.
func checkInstalled() (java string, err error) {
	java, err = exec.LookPath("java")
	if err != nil {
		return "", fmt.Errorf("zktest: no java on PATH: %s", installHint)
	}
	if _, err := os.Stat(classPath[0]); err != nil {
		return "", fmt.Errorf("zktest: ZooKeeper is not installed (%s is missing): %s", classPath[0], installHint)
	}
	return java, nil
}

func javaClassPath() string {
	present := make([]string, 0, len(classPath))
	for _, jar := range classPath {
		if _, err := os.Stat(jar); err == nil {
			present = append(present, jar)
		}
	}
	return strings.Join(present, ":")
}
