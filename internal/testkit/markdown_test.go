package testkit_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/leafid/leaf/internal/testkit"
)

const markdown = "# leaf\n" +
	"\n" +
	"A [first link](docs/a.md#x) and a [second\n" +
	"one](b.md), an ![image](status.png \"title\"), `[not](code.md)` and ``[nor](this.md)``.\n" +
	"\n" +
	"## Kinds of id, and what each promises\n" +
	"## MySQL 8.4 and MariaDB 10.11\n" +
	"## `leaf store` and `--store`\n" +
	"## Dense numbers: capped and ordered formatted tags\n" +
	"### The [Go client](go-client.md) beside it ###\n" +
	"## 订单 tags\n" +
	"## Errors\n" +
	"the table\n" +
	"```sh\n" +
	"# not a heading\n" +
	"[nor a link](c.md)\n" +
	"```\n" +
	"### Under errors\n" +
	"more\n" +
	"## Errors\n" +
	"#not a heading either\n"

func TestAnchors(t *testing.T) {
	got := testkit.Anchors(markdown)
	want := map[string]string{
		"leaf":                               "leaf",
		"kinds-of-id-and-what-each-promises": "Kinds of id, and what each promises",
		"mysql-84-and-mariadb-1011":          "MySQL 8.4 and MariaDB 10.11",
		"leaf-store-and---store":             "`leaf store` and `--store`",
		"dense-numbers-capped-and-ordered-formatted-tags": "Dense numbers: capped and ordered formatted tags",
		"the-go-client-beside-it":                         "The [Go client](go-client.md) beside it",
		"订单-tags":                                         "订单 tags",
		"errors":                                          "Errors",
		"under-errors":                                    "Under errors",
		"errors-1":                                        "Errors",
	}
	if !maps.Equal(got, want) {
		t.Errorf("Anchors:\n got %q\nwant %q", got, want)
	}
}

func TestSection(t *testing.T) {
	got, ok := testkit.Section(markdown, "## Errors")
	want := "the table\n```sh\n# not a heading\n[nor a link](c.md)\n```\n### Under errors\nmore"
	if !ok || got != want {
		t.Errorf("Section(## Errors) = %q, %v; want %q, true", got, ok, want)
	}
	if _, ok := testkit.Section(markdown, "## Missing"); ok {
		t.Error("Section(## Missing) found it")
	}
}

func TestLinks(t *testing.T) {
	got := testkit.Links(markdown)
	want := []string{"docs/a.md#x", "b.md", "status.png", "go-client.md"}
	if !slices.Equal(got, want) {
		t.Errorf("Links = %q, want %q", got, want)
	}
}
