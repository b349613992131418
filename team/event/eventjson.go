package event

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// An event is written as one flat JSON object, as it was when Event was one
// flat struct: "time", "kind", "agent", then the payload's fields, then a
// few fields derived from them that readers of the old lines know: the
// "detail" words of a task, handoff, compaction or activity, "is_error" of an
// error, a bad line or an interrupted answer, and a retry's "turn" (its
// attempt) and "delay_ms".

// envelope is the part of the line every event has.
type envelope struct {
	Time  time.Time `json:"time"`
	Kind  EventKind `json:"kind"`
	Agent string    `json:"agent,omitempty"`
}

// MarshalJSON writes the event as one flat object.
func (e Event) MarshalJSON() ([]byte, error) {
	if u, ok := e.Payload.(Unknown); ok {
		return u.Line, nil
	}
	head, err := json.Marshal(envelope{Time: e.Time, Kind: e.Kind(), Agent: e.Agent})
	if err != nil {
		return nil, err
	}
	if e.Payload == nil {
		return head, nil
	}
	body, err := json.Marshal(e.Payload)
	if err != nil {
		return nil, err
	}
	extra, err := json.Marshal(wireExtras(e))
	if err != nil {
		return nil, err
	}
	return joinObjects(head, body, extra), nil
}

// wireExtras are the fields derived from the payload (see above).
func wireExtras(e Event) map[string]any {
	switch p := e.Payload.(type) {
	case Failure, BadLine:
		return map[string]any{"is_error": true}
	case Answer:
		if !p.Interrupted {
			return nil
		}
		if p.Text == "" {
			return map[string]any{"is_error": true, "detail": interruptedText}
		}
		return map[string]any{"is_error": true}
	case Retry:
		return map[string]any{"turn": p.Attempt, "delay_ms": p.Delay.Milliseconds()}
	case TaskChanged:
		return map[string]any{"detail": p.Text(e.Agent)}
	case HandoffChanged:
		return map[string]any{"detail": p.text()}
	case Compacted:
		return map[string]any{"detail": p.text()}
	case Instructions:
		return map[string]any{"detail": p.text()}
	case Activity:
		return map[string]any{"detail": p.Words()}
	}
	return nil
}

// joinObjects merges JSON objects that share no key into one, in order.
func joinObjects(objs ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for _, o := range objs {
		inner := bytes.TrimSpace(o)
		if len(inner) < 2 || inner[0] != '{' {
			continue // null: no fields
		}
		inner = bytes.TrimSpace(inner[1 : len(inner)-1])
		if len(inner) == 0 {
			continue
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(inner)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// UnmarshalJSON reads a line of events.jsonl back into its typed payload; a
// kind this program does not know is kept whole as Unknown.
func (e *Event) UnmarshalJSON(data []byte) error {
	var head envelope
	if err := json.Unmarshal(data, &head); err != nil {
		return err
	}
	p, err := decodePayload(head.Kind, data)
	if err != nil {
		return fmt.Errorf("a %s event: %w", head.Kind, err)
	}
	*e = Event{Time: head.Time, Agent: head.Agent, Payload: p}
	return nil
}

func decodePayload(kind EventKind, data []byte) (Payload, error) {
	switch kind {
	case EventSpawn:
		return decodeAs[Spawn](data)
	case EventStatus:
		return decodeAs[StatusChanged](data)
	case EventMessage:
		return decodeAs[MessageDelivered](data)
	case EventToolCall:
		return decodeAs[ToolCall](data)
	case EventReply:
		return decodeAs[Reply](data)
	case EventAnswer:
		p, err := decodeAs[Answer](data)
		if a := p.(Answer); a.Interrupted && a.Text == interruptedText {
			a.Text = ""
			p = a
		}
		return p, err
	case EventRetry:
		p, err := decodeAs[Retry](data)
		var extra struct {
			DelayMS int64 `json:"delay_ms"`
		}
		if err == nil {
			err = json.Unmarshal(data, &extra)
		}
		r := p.(Retry)
		r.Delay = time.Duration(extra.DelayMS) * time.Millisecond
		return r, err
	case EventError:
		return decodeAs[Failure](data)
	case EventBadLine:
		return decodeAs[BadLine](data)
	case EventRepair:
		return decodeAs[Repair](data)
	case EventSettled:
		return decodeAs[Settled](data)
	case EventTask:
		return decodeAs[TaskChanged](data)
	case EventCompacted:
		return decodeAs[Compacted](data)
	case EventInstructions:
		return decodeAs[Instructions](data)
	case EventHandoff:
		return decodeAs[HandoffChanged](data)
	case EventActivity:
		return decodeAs[Activity](data)
	case EventIntake:
		return decodeAs[Intake](data)
	case EventRequestOpened:
		return decodeAs[RequestOpened](data)
	case EventRequestAnswered:
		return decodeAs[RequestAnswered](data)
	case EventRequestExpired:
		return decodeAs[RequestExpired](data)
	case EventWorktree:
		return decodeAs[WorktreeChanged](data)
	case EventPermission:
		return decodeAs[Permission](data)
	case EventHook:
		return decodeAs[HookRun](data)
	case EventPrompt:
		return decodeAs[Prompt](data)
	}
	return Unknown{Name: kind, Line: bytes.Clone(data)}, nil
}

func decodeAs[P Payload](data []byte) (Payload, error) {
	var p P
	err := json.Unmarshal(data, &p)
	return p, err
}

// Unknown is the payload of a line whose kind this program does not know
// (written by a newer one); it is kept whole, and written back as it was.
type Unknown struct {
	Name EventKind
	Line json.RawMessage
}

// Kind is the line's own kind.
func (u Unknown) Kind() EventKind { return u.Name }
