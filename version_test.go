package leaf_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestOneVersion: the project has one version, the file VERSION, and every
// place that states one states it: the server's build (make build passes it
// to leaf version), the Python package, the TypeScript package and its lock
// file, the Java client's pom.xml (its jar's manifest and coordinates).
func TestOneVersion(t *testing.T) {
	b, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Fatalf("VERSION holds %q, want MAJOR.MINOR.PATCH", v)
	}
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	found := func(where, re string, text string) {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("%s states no version (%s)", where, re)
		} else if m[1] != v {
			t.Errorf("%s states version %s, VERSION %s", where, m[1], v)
		}
	}
	found("clients/python/src/leaf_client/__init__.py", `(?m)^__version__ = "([^"]*)"`, read("clients/python/src/leaf_client/__init__.py"))
	found("clients/java/pom.xml", `(?s)<artifactId>leaf-client</artifactId>\s*<version>([^<]*)</version>`, read("clients/java/pom.xml"))
	for _, p := range []string{"clients/typescript/package.json", "clients/typescript/package-lock.json"} {
		var pkg struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal([]byte(read(p)), &pkg); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		found(p, `(.*)`, pkg.Version)
	}
	out, err := exec.Command("make", "-n", "build").Output()
	if err != nil {
		t.Fatalf("make -n build: %v", err)
	}
	found("make build", `-X main\.version=(\S+)"`, string(out))
}

// TestOneLicence: each client's package ships the repository's LICENSE as
// it is.
func TestOneLicence(t *testing.T) {
	root, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"clients/python/LICENSE", "clients/typescript/LICENSE", "clients/java/LICENSE"} {
		if b, err := os.ReadFile(p); err != nil || string(b) != string(root) {
			t.Errorf("%s is not the repository's LICENSE (%v)", p, err)
		}
	}
}
