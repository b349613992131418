package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// colourless is a frame with no escape sequence, as Lip Gloss v1 drew it
// for the ASCII profile these tests set before v2 (v2 styles always carry
// their sequences; Bubble Tea takes out what the terminal cannot show).
func colourless(frame string) string {
	var b strings.Builder
	w := &colorprofile.Writer{Forward: &b, Profile: colorprofile.NoTTY}
	_, _ = w.WriteString(frame)
	return b.String()
}

// textKey is the key press that types s.
func textKey(s string) tea.KeyPressMsg {
	r := []rune(s)
	if len(r) == 1 {
		return tea.KeyPressMsg{Code: r[0], Text: s}
	}
	return tea.KeyPressMsg{Code: tea.KeyExtended, Text: s}
}

// fakeEngine records what the model asked of the team.
type fakeEngine struct {
	mu         sync.Mutex
	said       []string
	sent       [][2]string
	broadcasts []string
	spawns     []tools.SpawnSpec
	reviews    []review
	answers    []answer
	shutdowns  [][2]string
	merges     []string
	diffs      []string
	diffText   string // what Diff answers; "" is a short diff naming the teammate
	tasks      string
	auto       []bool
	interrupts int
	convs      map[string][]openai.ChatCompletionMessage
	describe   string
	inboxes    map[string]string
	err        error
	// catalog is what is configured; leadModel the lead's label, which
	// SetLeadModel changes to a catalog model.
	catalog   models.Catalog
	leadModel string
}

func (f *fakeEngine) Say(text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.said = append(f.said, text)
	return f.err
}

func (f *fakeEngine) Send(ctx context.Context, to, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, [2]string{to, content})
	return f.err
}

func (f *fakeEngine) Broadcast(ctx context.Context, content string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.broadcasts = append(f.broadcasts, content)
	return []string{"alice", "bob"}, f.err
}

func (f *fakeEngine) Spawn(ctx context.Context, spec tools.SpawnSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spawns = append(f.spawns, spec)
	return f.err
}

// review is one /approve or /reject the engine was asked for.
// answer is one answer to a permission ask.
type answer struct {
	id              string
	approve, always bool
	reason          string
	session         bool
}

type review struct {
	name     string
	approve  bool
	feedback string
}

func (f *fakeEngine) ReviewPlan(ctx context.Context, name string, approve bool, feedback string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reviews = append(f.reviews, review{name, approve, feedback})
	if f.err != nil {
		return "", f.err
	}
	return "reviewed " + name + "'s plan", nil
}

func (f *fakeEngine) Compact() (string, error) { return "compacted", nil }

func (f *fakeEngine) Usage() registry.TeamUsage {
	cost := 0.0123
	return registry.SumUsage([]registry.AgentUsage{{Agent: "lead", Model: "test-model", Usage: registry.Usage{PromptTokens: 900, CompletionTokens: 100, Tokens: 1000, Cost: &cost}}, {Agent: "alice", Model: "local/qwen", Usage: registry.Usage{PromptTokens: 400, CompletionTokens: 100, Tokens: 500}}})
}

func (f *fakeEngine) AllowForSession(ctx context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answer{id: id, approve: true, session: true})
	return "allowed for the session", f.err
}

func (f *fakeEngine) AnswerPermission(ctx context.Context, id string, approve, always bool, reason string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, answer{id: id, approve: approve, always: always, reason: reason})
	if f.err != nil {
		return "", f.err
	}
	return "answered " + id, nil
}

func (f *fakeEngine) Shutdown(ctx context.Context, name, reason string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shutdowns = append(f.shutdowns, [2]string{name, reason})
	if f.err != nil {
		return "", f.err
	}
	return "asked " + name + " to shut down", nil
}

func (f *fakeEngine) Tasks(ctx context.Context) (string, error) { return f.tasks, f.err }

func (f *fakeEngine) Diff(ctx context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.diffs = append(f.diffs, name)
	if f.err != nil {
		return "", f.err
	}
	if f.diffText != "" {
		return f.diffText, nil
	}
	return " notes.txt | 2 +-\n+TWO by " + name, nil
}

func (f *fakeEngine) Merge(ctx context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.merges = append(f.merges, name)
	if f.err != nil {
		return "", f.err
	}
	return "Merged agentteam/" + name + " into main: 1 file changed.", nil
}

func (f *fakeEngine) SetAuto(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.auto = append(f.auto, on)
}

func (f *fakeEngine) Interrupt() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.interrupts++
	return true
}

func (f *fakeEngine) Conversation(name string) ([]openai.ChatCompletionMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.convs[name]
	return append([]openai.ChatCompletionMessage(nil), c...), ok
}

func (f *fakeEngine) Describe(ctx context.Context) (string, error) { return f.describe, f.err }

func (f *fakeEngine) SetLeadModel(spec string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.catalog.Models {
		if m.Label == spec || strings.HasSuffix(m.Label, "/"+spec) {
			f.leadModel = m.Label
			return m.Label, nil
		}
	}
	return "", fmt.Errorf("model %q is not configured", spec)
}

func (f *fakeEngine) AnswerBudget(goOn bool) (string, error) {
	return "", fmt.Errorf("the team has not reached its budget: there is nothing to answer")
}

func (f *fakeEngine) Models() (models.Catalog, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.catalog, f.leadModel
}

func (f *fakeEngine) Inbox(_ context.Context, name string) (string, error) {
	if s, ok := f.inboxes[name]; ok {
		return s, nil
	}
	return "", fmt.Errorf("no inbox %q", name)
}

// harness drives a Model directly: jobs run when flushed, in order.
type harness struct {
	t    testing.TB
	m    *Model
	eng  *fakeEngine
	jobs []func() tea.Msg
}

func newHarness(t testing.TB, w, h int, opts Options) *harness {
	t.Helper()
	eng := &fakeEngine{convs: map[string][]openai.ChatCompletionMessage{}, inboxes: map[string]string{}}
	hs := newHarnessWith(t, w, h, opts, eng)
	hs.eng = eng
	return hs
}

// newHarnessWith drives a Model over any engine (a real team's, say).
func newHarnessWith(t testing.TB, w, h int, opts Options, eng engine.Engine) *harness {
	t.Helper()
	hs := &harness{t: t}
	if opts.ModelName == "" {
		opts.ModelName = "test-model"
	}
	hs.m = New(context.Background(), opts, eng, func(job func() tea.Msg) { hs.jobs = append(hs.jobs, job) })
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	return hs
}

// send gives the model a message and returns the command it answered with.
func (hs *harness) send(msg tea.Msg) tea.Cmd {
	_, cmd := hs.m.Update(msg)
	return cmd
}

// flush runs the queued jobs and feeds their results back.
func (hs *harness) flush() {
	for len(hs.jobs) > 0 {
		job := hs.jobs[0]
		hs.jobs = hs.jobs[1:]
		if msg := job(); msg != nil {
			hs.send(msg)
		}
	}
}

// run runs a command the model returned, a batch's or a sequence's commands each, and
// gives the model their messages back. Only for commands that do not
// wait: no agent may be working (its spinner ticks).
func (hs *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	// tea.BatchMsg, and Bubble Tea's unexported sequence, are lists of commands.
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		for i := range v.Len() {
			hs.run(v.Index(i).Interface().(tea.Cmd))
		}
		return
	}
	if msg != nil {
		hs.run(hs.send(msg))
	}
}

func (hs *harness) typeText(s string) {
	for _, r := range s {
		hs.send(textKey(string(r)))
	}
}

func (hs *harness) key(code rune) tea.Cmd { return hs.send(tea.KeyPressMsg{Code: code}) }

// enter types s and presses enter, then runs the jobs.
func (hs *harness) enter(s string) tea.Cmd {
	hs.typeText(s)
	cmd := hs.key(tea.KeyEnter)
	hs.flush()
	return cmd
}

func (hs *harness) view() string { return colourless(hs.m.View().Content) }

func (hs *harness) mustSee(parts ...string) {
	hs.t.Helper()
	v := hs.view()
	for _, p := range parts {
		if !strings.Contains(v, p) {
			hs.t.Fatalf("screen lacks %q:\n%s", p, v)
		}
	}
}

func (hs *harness) mustNotSee(parts ...string) {
	hs.t.Helper()
	v := hs.view()
	for _, p := range parts {
		if strings.Contains(v, p) {
			hs.t.Fatalf("screen shows %q:\n%s", p, v)
		}
	}
}

// events wraps engine events as one batch, as the Bridge sends them.
func events(es ...event.Event) bridge.Batch {
	b := bridge.Batch{}
	for i := range es {
		b.Items = append(b.Items, bridge.Item{Event: &es[i]})
	}
	return b
}

func deltas(agent string, restart bool, text string) bridge.Batch {
	return bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: agent, Restart: restart, Text: text}}}}
}

func members(specs ...string) poll.Snapshot {
	var ms []registry.Member
	for _, s := range specs {
		name, status, _ := strings.Cut(s, ":")
		ms = append(ms, registry.Member{Name: name, Role: "tester", Status: registry.Status(status)})
	}
	return poll.Snapshot{Config: registry.Config{Teammates: ms}, Unread: map[string]int{}}
}

// checkScreen asserts the screen is exactly h lines of at most w cells.
func checkScreen(t *testing.T, v string, w, h int) {
	t.Helper()
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("%dx%d: view has %d lines, want %d", w, h, len(lines), h)
	}
	for i, l := range lines {
		if lw := lipgloss.Width(l); lw > w {
			t.Fatalf("%dx%d: line %d is %d cells wide: %q", w, h, i, lw, l)
		}
	}
}
