package settings

import (
	"strings"
	"testing"
)

func TestEnsureRemoveFlat(t *testing.T) {
	const orig = `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {"command": "./format.sh"}
    ]
  }
}
`
	ours := func(h Handler) bool { return strings.HasSuffix(h.Command, " hook --agent cursor") }
	specs := []FlatSpec{
		{Event: "beforeMCPExecution", Command: "/bin/gate hook --agent cursor", Timeout: 5},
		{Event: "afterFileEdit", Command: "/bin/gate hook --agent cursor", Timeout: 5},
	}
	doc, err := Parse("hooks.json", []byte(orig))
	if err != nil {
		t.Fatal(err)
	}
	changes, err := doc.EnsureFlat(specs, map[string]*Value{"version": Int(1)}, ours)
	if err != nil || len(changes) != 2 || changes[0].Action != "added" || changes[1].Action != "added" {
		t.Fatalf("EnsureFlat: %+v, %v", changes, err)
	}
	out := doc.Bytes()
	for _, want := range []string{`"./format.sh"`, `"beforeMCPExecution": [`, `"command": "/bin/gate hook --agent cursor"`, `"timeout": 5`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("after EnsureFlat the file lacks %s:\n%s", want, out)
		}
	}
	if n := len(doc.FlatHandlers()); n != 3 {
		t.Errorf("FlatHandlers: %d, want 3", n)
	}
	// Again: nothing changes; the binary moved: updated in place.
	doc2, _ := Parse("hooks.json", out)
	if ch, _ := doc2.EnsureFlat(specs, nil, ours); ch[0].Action != "unchanged" || string(doc2.Bytes()) != string(out) {
		t.Errorf("second EnsureFlat: %+v\n%s", ch, doc2.Bytes())
	}
	moved := []FlatSpec{{Event: "beforeMCPExecution", Command: "/opt/gate hook --agent cursor", Timeout: 5}}
	if ch, _ := doc2.EnsureFlat(moved, nil, ours); ch[0].Action != "updated" || ch[0].Was != "/bin/gate hook --agent cursor" {
		t.Errorf("moved binary: %+v", ch)
	}
	// Remove gives back the original bytes.
	doc3, _ := Parse("hooks.json", out)
	events, n := doc3.RemoveFlat(ours)
	if n != 2 || len(events) != 2 || string(doc3.Bytes()) != orig {
		t.Errorf("RemoveFlat: %v %d\n%s\nwant\n%s", events, n, doc3.Bytes(), orig)
	}
	// A file of another shape is refused, untouched.
	bad, _ := Parse("hooks.json", []byte(`{"hooks": {"beforeMCPExecution": {"command": "x"}}}`))
	if _, err := bad.EnsureFlat(specs, nil, ours); err == nil {
		t.Error("EnsureFlat on an event that is not an array: no error")
	}
}
