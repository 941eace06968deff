// Package deploy holds the files users deploy beside leaf: Prometheus
// alerting rules and their unit tests (prometheus/), a Grafana dashboard
// (grafana/) and a Kubernetes example (kubernetes/). It has no code; its
// tests check that every file parses, that every dashboard query is valid
// PromQL, and that the files agree with docs/ (variables, metrics,
// runbooks), with each other and, where a rule repeats a number of the
// code, with the code.
package deploy
