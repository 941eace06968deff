package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/leafid/leaf/internal/testkit"
)

const (
	rulesFile     = "prometheus/leaf-alerts.yml"
	ruleTestsFile = "prometheus/leaf-alerts_test.yml"
	dashboardFile = "grafana/leaf-dashboard.json"
	manifestFile  = "kubernetes/leaf.yaml"
	cliFile       = "../docs/cli.md"           // its flag table has every variable
	metricsFile   = "../docs/observability.md" // its Metrics section lists every metric
	runbooksFile  = "../docs/runbooks.md"      // a heading per alert

	runbookBase = "https://github.com/leafid/leaf/blob/main/docs/runbooks.md#"
)

// promtool returns the promtool to run ($PROMTOOL, else the one in PATH),
// or skips the test when there is none; under CI=true that is a failure.
func promtool(t *testing.T) string {
	t.Helper()
	name := os.Getenv("PROMTOOL")
	if name == "" {
		name = "promtool"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not found: install Debian's prometheus package (apt-get install prometheus) to check the rules and the dashboard's queries", name)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

// runPromtool runs promtool with args in dir and fails the test with its
// output when it fails.
func runPromtool(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(promtool(t), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

type ruleTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []struct {
				ExpLabels      map[string]string `yaml:"exp_labels"`
				ExpAnnotations map[string]string `yaml:"exp_annotations"`
			} `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// decodeYAML decodes the single document in file into v; strict refuses
// fields that v does not have, for files whose every key v names.
func decodeYAML(t *testing.T, file string, v any, strict bool) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestAlertRules(t *testing.T) {
	runPromtool(t, ".", "check", "rules", rulesFile)
	runPromtool(t, filepath.Dir(ruleTestsFile), "test", "rules", filepath.Base(ruleTestsFile))
}

// TestAlertsAgree checks what promtool does not: each alert has its
// annotations, a runbook entry in docs/runbooks.md, and unit tests both
// where it fires and where it stays quiet; its metrics are the documented
// ones.
func TestAlertsAgree(t *testing.T) {
	var rules ruleFile
	decodeYAML(t, rulesFile, &rules, true)
	var tests ruleTests
	decodeYAML(t, ruleTestsFile, &tests, false)
	metrics := documentedMetrics(t)
	runbooks, err := os.ReadFile(runbooksFile)
	if err != nil {
		t.Fatal(err)
	}
	headings := testkit.Anchors(string(runbooks))

	fires, quiet := map[string]bool{}, map[string]bool{}
	for _, tc := range tests.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				quiet[a.Alertname] = true
			}
		}
	}

	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("group %s: a rule that is not an alert (%s)", g.Name, r.Record)
				continue
			}
			name := r.Alert
			alerts = append(alerts, name)
			if slices.Contains(alerts[:len(alerts)-1], name) {
				t.Errorf("%s: defined twice", name)
			}
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("%s: severity %q, want warning or critical", name, s)
			}
			for _, k := range []string{"summary", "description", "runbook_url"} {
				if r.Annotations[k] == "" {
					t.Errorf("%s: no %s annotation", name, k)
				}
			}
			if len(r.Annotations) != 3 {
				t.Errorf("%s: annotations %v, want summary, description and runbook_url only", name, r.Annotations)
			}
			anchor, ok := strings.CutPrefix(r.Annotations["runbook_url"], runbookBase)
			if !ok || anchor != strings.ToLower(name) {
				t.Errorf("%s: runbook_url %q, want %s%s", name, r.Annotations["runbook_url"], runbookBase, strings.ToLower(name))
			}
			if heading, ok := headings[anchor]; !ok || heading != name {
				t.Errorf("%s: %s has no runbook heading %q (anchor #%s)", name, runbooksFile, "## "+name, anchor)
			}
			if !fires[name] {
				t.Errorf("%s: no unit test where it fires", name)
			}
			if !quiet[name] {
				t.Errorf("%s: no unit test where it stays quiet", name)
			}
			checkMetrics(t, name, r.Expr, metrics)
		}
	}
	for name := range fires {
		if !slices.Contains(alerts, name) {
			t.Errorf("the unit tests expect an alert %s that the rules do not define", name)
		}
	}
	if len(alerts) < 10 {
		t.Errorf("%d alerts, want at least 10", len(alerts))
	}
}

// The dashboard's shape, as far as the checks below read it.
type dashboard struct {
	UID        string  `json:"uid"`
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
}

type panel struct {
	ID         int         `json:"id"`
	Type       string      `json:"type"`
	Title      string      `json:"title"`
	Datasource *datasource `json:"datasource"`
	GridPos    struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Targets []struct {
		RefID      string      `json:"refId"`
		Expr       string      `json:"expr"`
		Datasource *datasource `json:"datasource"`
	} `json:"targets"`
	Panels []panel `json:"panels"` // a collapsed row's
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// query is one PromQL expression of the dashboard and where it is.
type query struct{ where, expr string }

// dashboardQueries reads the dashboard, checks its structure, and returns
// every PromQL expression in it (panel targets and variable queries) with
// Grafana's variables replaced by values PromQL accepts.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: data after the dashboard", dashboardFile)
	}
	if d.UID == "" {
		t.Errorf("%s: no uid", dashboardFile)
	}

	vars := map[string]bool{}
	var queries []query
	for _, v := range d.Templating.List {
		vars[v.Name] = true
		if v.Type != "query" {
			continue
		}
		checkDatasource(t, "variable "+v.Name, v.Datasource)
		var q struct {
			Query string `json:"query"`
		}
		if err := json.Unmarshal(v.Query, &q); err != nil {
			t.Errorf("variable %s: query: %v", v.Name, err)
			continue
		}
		// label_values(selector, label): the selector is PromQL.
		m := regexp.MustCompile(`^label_values\((.+),\s*\w+\)$`).FindStringSubmatch(q.Query)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", v.Name, q.Query)
			continue
		}
		queries = append(queries, query{"variable " + v.Name, m[1]})
	}
	if !vars["datasource"] {
		t.Errorf("%s: no datasource variable", dashboardFile)
	}

	ids := map[int]bool{}
	var walk func(ps []panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			where := fmt.Sprintf("panel %d %q", p.ID, p.Title)
			if p.ID == 0 || ids[p.ID] {
				t.Errorf("%s: id missing or used twice", where)
			}
			ids[p.ID] = true
			if p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
				t.Errorf("%s: gridPos %+v outside the 24 columns", where, p.GridPos)
			}
			walk(p.Panels)
			if p.Type == "row" {
				continue
			}
			checkDatasource(t, where, p.Datasource)
			if len(p.Targets) == 0 {
				t.Errorf("%s: no query", where)
			}
			refs := map[string]bool{}
			for _, tg := range p.Targets {
				if tg.RefID == "" || refs[tg.RefID] {
					t.Errorf("%s: refId %q missing or used twice", where, tg.RefID)
				}
				refs[tg.RefID] = true
				checkDatasource(t, where, tg.Datasource)
				queries = append(queries, query{where + " " + tg.RefID, tg.Expr})
			}
		}
	}
	walk(d.Panels)

	for i, q := range queries {
		expr, err := substitute(q.expr, vars)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
		}
		queries[i].expr = expr
	}
	return queries
}

func checkDatasource(t *testing.T, where string, ds *datasource) {
	t.Helper()
	if ds == nil || ds.Type != "prometheus" || ds.UID != "${datasource}" {
		t.Errorf("%s: datasource %+v, want the $datasource variable", where, ds)
	}
}

// grafanaVar matches $name, ${name} and ${name:format}.
var grafanaVar = regexp.MustCompile(`\$(?:\{(\w+)(?::\w+)?\}|(\w+))`)

// substitute replaces Grafana's variables in expr: its interval variables
// by durations, the dashboard's own by a label value. Any other is an error.
func substitute(expr string, vars map[string]bool) (string, error) {
	intervals := map[string]string{"__rate_interval": "5m", "__interval": "1m", "__range": "1h"}
	var errs []error
	out := grafanaVar.ReplaceAllStringFunc(expr, func(s string) string {
		m := grafanaVar.FindStringSubmatch(s)
		name := m[1] + m[2]
		if d, ok := intervals[name]; ok {
			return d
		}
		if vars[name] {
			return "x"
		}
		errs = append(errs, fmt.Errorf("unknown variable $%s", name))
		return s
	})
	return out, errors.Join(errs...)
}

// TestDashboardQueries has promtool parse every query of the dashboard, as
// the expression of a recording rule.
func TestDashboardQueries(t *testing.T) {
	queries := dashboardQueries(t)
	if len(queries) < 20 {
		t.Fatalf("%d queries found in the dashboard, want at least 20", len(queries))
	}
	type rule struct {
		Record string `yaml:"record"`
		Expr   string `yaml:"expr"`
	}
	var rules []rule
	var where []string
	for i, q := range queries {
		rules = append(rules, rule{Record: fmt.Sprintf("dashboard:query_%d", i), Expr: q.expr})
		where = append(where, fmt.Sprintf("dashboard:query_%d is %s", i, q.where))
	}
	b, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboard", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "dashboard-queries.yml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool(t), "check", "rules", file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the dashboard's queries: %v\n%s\n%s", err, out, strings.Join(where, "\n"))
	}
}

// TestDashboardMetrics: the dashboard shows only the documented metrics.
func TestDashboardMetrics(t *testing.T) {
	metrics := documentedMetrics(t)
	for _, q := range dashboardQueries(t) {
		checkMetrics(t, q.where, q.expr, metrics)
	}
}

// The Kubernetes manifest, as far as the checks below read it.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec yaml.Node `yaml:"spec"`
}

type deploymentSpec struct {
	Replicas int `yaml:"replicas"`
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
			Containers                    []struct {
				Name  string `yaml:"name"`
				Ports []struct {
					Name          string `yaml:"name"`
					ContainerPort int    `yaml:"containerPort"`
				} `yaml:"ports"`
				Env []struct {
					Name      string `yaml:"name"`
					Value     string `yaml:"value"`
					ValueFrom *struct {
						SecretKeyRef *struct {
							Name string `yaml:"name"`
							Key  string `yaml:"key"`
						} `yaml:"secretKeyRef"`
					} `yaml:"valueFrom"`
				} `yaml:"env"`
				LivenessProbe  *probe `yaml:"livenessProbe"`
				ReadinessProbe *probe `yaml:"readinessProbe"`
				StartupProbe   *probe `yaml:"startupProbe"`
				Lifecycle      struct {
					PreStop struct {
						Sleep struct {
							Seconds int `yaml:"seconds"`
						} `yaml:"sleep"`
					} `yaml:"preStop"`
				} `yaml:"lifecycle"`
				Resources struct {
					Requests map[string]string `yaml:"requests"`
				} `yaml:"resources"`
			} `yaml:"containers"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type serviceSpec struct {
	Selector map[string]string `yaml:"selector"`
	Ports    []struct {
		TargetPort string `yaml:"targetPort"`
	} `yaml:"ports"`
}

type pdbSpec struct {
	MinAvailable int `yaml:"minAvailable"`
	Selector     struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
}

// shutdownBound is the longest a clean stop of `leaf serve` takes: the
// HTTP shutdown, the hand-back of unused ids and the lease release, each
// bounded by cmd/leaf's 10 s shutdownTimeout.
const shutdownBound = 30

func TestKubernetesManifest(t *testing.T) {
	b, err := os.ReadFile(manifestFile)
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]k8sObject{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var o k8sObject
		if err := dec.Decode(&o); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", manifestFile, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("%s: a document without apiVersion, kind or name: %+v", manifestFile, o)
		}
		objs[o.Kind] = o
	}
	spec := func(kind string, v any) {
		t.Helper()
		o, ok := objs[kind]
		if !ok {
			t.Fatalf("%s: no %s", manifestFile, kind)
		}
		if err := o.Spec.Decode(v); err != nil {
			t.Fatalf("%s: %s: %v", manifestFile, kind, err)
		}
	}
	var dep deploymentSpec
	spec("Deployment", &dep)
	var svc serviceSpec
	spec("Service", &svc)
	var pdb pdbSpec
	spec("PodDisruptionBudget", &pdb)

	pod := dep.Template.Metadata.Labels
	selects := func(what string, sel map[string]string) {
		t.Helper()
		if len(sel) == 0 {
			t.Errorf("%s: empty selector", what)
		}
		for k, v := range sel {
			if pod[k] != v {
				t.Errorf("%s: selector %s=%s does not match the pod's labels %v", what, k, v, pod)
			}
		}
	}
	selects("Deployment", dep.Selector.MatchLabels)
	selects("Service", svc.Selector)
	selects("PodDisruptionBudget", pdb.Selector.MatchLabels)
	if pdb.MinAvailable < 1 || pdb.MinAvailable >= dep.Replicas {
		t.Errorf("PodDisruptionBudget minAvailable %d with %d replicas: want at least 1 and fewer than the replicas, or no node can be drained", pdb.MinAvailable, dep.Replicas)
	}

	pspec := dep.Template.Spec
	if len(pspec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pspec.Containers))
	}
	c := pspec.Containers[0]
	if min := c.Lifecycle.PreStop.Sleep.Seconds + shutdownBound; pspec.TerminationGracePeriodSeconds < min {
		t.Errorf("terminationGracePeriodSeconds %d, want at least %d for a clean stop", pspec.TerminationGracePeriodSeconds, min)
	}

	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	env := map[string]string{}
	secrets := map[string]bool{}
	documented := cliEnv(t)
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key != "" {
			secrets[e.Name] = true
		}
		if !documented[e.Name] {
			t.Errorf("env %s is not a variable %s documents", e.Name, cliFile)
		}
	}
	for _, name := range []string{"LEAF_MYSQL_DSN", "LEAF_ADMIN_TOKEN"} {
		if !secrets[name] || env[name] != "" {
			t.Errorf("env %s: want it from a Secret, not written in the manifest", name)
		}
	}
	if addr := env["LEAF_ADDR"]; ports["http"] == 0 || addr != fmt.Sprintf(":%d", ports["http"]) {
		t.Errorf("LEAF_ADDR %q and the container port http %d disagree", addr, ports["http"])
	}
	for _, p := range svc.Ports {
		if _, ok := ports[p.TargetPort]; !ok {
			t.Errorf("Service targetPort %q is not a container port", p.TargetPort)
		}
	}

	probes := []struct {
		name string
		p    *probe
		path string
	}{
		{"livenessProbe", c.LivenessProbe, "/healthz"},
		{"readinessProbe", c.ReadinessProbe, "/readyz"},
		{"startupProbe", c.StartupProbe, "/healthz"},
	}
	for _, p := range probes {
		if p.p == nil || p.p.HTTPGet.Path != p.path || ports[p.p.HTTPGet.Port] == 0 {
			t.Errorf("%s: %+v, want GET %s on a container port", p.name, p.p, p.path)
		}
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" {
			t.Errorf("no %s request", r)
		}
	}
}

// metricName matches leaf's metric names; histogram series add suffixes.
var metricName = regexp.MustCompile(`\bleaf_[a-z0-9_]*[a-z0-9]`)

// documentedMetrics returns the metric names listed in the Metrics
// section of docs/observability.md.
func documentedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(metricsFile)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Metrics\n")
	if !ok {
		t.Fatalf("%s has no Metrics section", metricsFile)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	names := map[string]bool{}
	for _, m := range metricName.FindAllString(section, -1) {
		names[m] = true
	}
	return names
}

// checkMetrics fails for each leaf_ metric in expr that is not in listed
// (a histogram's _bucket, _sum and _count series count as the histogram).
func checkMetrics(t *testing.T, where, expr string, listed map[string]bool) {
	t.Helper()
	for _, m := range metricName.FindAllString(expr, -1) {
		base := m
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suffix); ok && listed[b] {
				base = b
			}
		}
		if !listed[base] {
			t.Errorf("%s: %s is not a metric %s lists", where, m, metricsFile)
		}
	}
}

// cliEnv returns the environment variables the flag table of
// docs/cli.md documents.
func cliEnv(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(cliFile)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `--[a-z-]+` \\| `(LEAF_[A-Z_]+)` \\|").FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	if len(out) < 10 {
		t.Fatalf("found %d environment variables in the flag table of %s, want at least 10", len(out), cliFile)
	}
	return out
}
