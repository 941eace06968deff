package service_test

import (
	"context"
	"testing"

	"github.com/leafid/leaf/internal/sequencetest"
	"github.com/leafid/leaf/service"
)

// TestNamesAlike: a new space or tag named like an existing one once case
// and width are folded is refused, naming the one it is like; a name that
// only looks close is not.
func TestNamesAlike(t *testing.T) {
	ctx := context.Background()
	svc := service.New(service.Config{Spaces: sequencetest.NewMemStore(nil)})
	if _, err := svc.CreateSpace(ctx, service.NewSpace{Name: "inbox"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"INBOX", "Inbox", "ＩＮＢＯＸ"} {
		_, err := svc.CreateSpace(ctx, service.NewSpace{Name: name})
		wantCode(t, "space "+name, err, service.SpaceExists, `like the space "inbox"`)
	}
	if _, err := svc.CreateSpace(ctx, service.NewSpace{Name: "inbox2"}); err != nil {
		t.Errorf("a space of another name: %v", err)
	}

	a := newTagAdmin(t, true)
	for _, name := range []string{"ss1", "abc"} {
		if _, err := a.Create(ctx, service.NewTag{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for name, like := range map[string]string{"ß1": "ss1", "ａｂｃ": "abc", "ＡＢＣ": "abc"} {
		_, err := a.Create(ctx, service.NewTag{Name: name})
		wantCode(t, "tag "+name, err, service.TagExists, `like the tag "`+like+`"`)
	}
	if _, err := a.Create(ctx, service.NewTag{Name: "ɑbc"}); err != nil {
		t.Errorf("a tag of another letter (Latin alpha): %v", err)
	}
	// A plain ASCII name after a name not ASCII that folds as it does.
	if _, err := a.Create(ctx, service.NewTag{Name: "Straße"}); err != nil {
		t.Fatal(err)
	}
	_, err := a.Create(ctx, service.NewTag{Name: "strasse"})
	wantCode(t, "tag strasse", err, service.TagExists, `like the tag "Straße"`)
	if _, err := a.Create(ctx, service.NewTag{Name: "strasse2"}); err != nil {
		t.Errorf("an ASCII tag of another name: %v", err)
	}
}
