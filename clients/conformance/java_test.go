package conformance

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The Java client's driver, compiled once a run with the client's sources
// (clients/java/src/main/java) into the run's build directory, so that it
// runs what the tree holds, not a leaf-client.jar built earlier.
var javaBuild struct {
	once sync.Once
	argv []string
	err  error
}

// javaDriver is the Java client's command line: JDK 17 or later, its java
// and javac.
func javaDriver() ([]string, []string, error) {
	javaBuild.once.Do(func() { javaBuild.argv, javaBuild.err = buildJavaDriver() })
	return javaBuild.argv, nil, javaBuild.err
}

func buildJavaDriver() ([]string, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, errors.New("java not found")
	}
	javac, err := exec.LookPath("javac")
	if err != nil {
		return nil, errors.New("javac not found (a JDK, not only a JRE)")
	}
	// java -version writes to stderr: openjdk version "17.0.15" 2025-04-15
	out, err := exec.Command(java, "-version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("java -version: %v", err)
	}
	m := regexp.MustCompile(`version "(\d+)`).FindSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("java -version: %q", strings.TrimSpace(string(out)))
	}
	if major, _ := strconv.Atoi(string(m[1])); major < 17 {
		return nil, fmt.Errorf("java is %d, older than 17", major)
	}
	srcs, _ := filepath.Glob(filepath.Join(root, "clients/java/src/main/java/io/leafid/client/*.java"))
	if len(srcs) == 0 {
		return nil, errors.New("no sources under clients/java/src/main/java")
	}
	classes := filepath.Join(buildDir, "java-driver")
	args := append([]string{"--release", "17", "-encoding", "UTF-8", "-d", classes}, srcs...)
	args = append(args, "drivers/java/Driver.java")
	if out, err := exec.Command(javac, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("javac: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(classes, "Driver.class")); err != nil {
		return nil, err
	}
	// Each case starts a fresh JVM. The C1 compiler alone and the serial
	// collector spend less CPU while it warms up, which on a loaded machine
	// is what a case's first calls wait for; the client's code is the same.
	return []string{java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classes, "Driver"}, nil
}
