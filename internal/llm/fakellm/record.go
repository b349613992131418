package fakellm

import openai "github.com/sashabaranov/go-openai"

// flightEvent is a request starting (+1) or ending (-1); replaying them in
// order gives the peak concurrency for any subset of agents.
type flightEvent struct {
	agent string
	delta int
}

// Calls returns every call served so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// CallsFor counts the calls served for one agent.
func (s *Server) CallsFor(agent string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.perAgent[agent]
}

// Requests returns one agent's requests, in arrival order.
func (s *Server) Requests(agent string) []openai.ChatCompletionRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []openai.ChatCompletionRequest
	for _, c := range s.calls {
		if c.Agent == agent {
			out = append(out, c.Req)
		}
	}
	return out
}

// InFlight is the number of requests being answered right now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight is the peak number of concurrent requests among the agents
// for which pred is true (nil pred: all agents).
func (s *Server) MaxInFlight(pred func(agent string) bool) int {
	s.mu.Lock()
	events := append([]flightEvent(nil), s.flights...)
	s.mu.Unlock()
	cur, peak := 0, 0
	for _, e := range events {
		if pred != nil && !pred(e.agent) {
			continue
		}
		cur += e.delta
		peak = max(peak, cur)
	}
	return peak
}

// Violations returns the protocol violations seen, each answered with 400.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

func (s *Server) begin(agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	s.flights = append(s.flights, flightEvent{agent, +1})
}

func (s *Server) end(agent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	s.flights = append(s.flights, flightEvent{agent, -1})
}

// record registers a call and returns it with its per-agent index.
func (s *Server) record(c Call) Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.N = s.perAgent[c.Agent]
	s.perAgent[c.Agent]++
	s.calls = append(s.calls, c)
	return c
}

func (s *Server) violation(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violations = append(s.violations, v)
}
