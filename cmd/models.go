package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/team/event"
)

// ModelsOptions are the inputs of `agentteam models`.
type ModelsOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	// Timeout bounds the whole request.
	Timeout time.Duration
	// HTTPClient nil is a plain client.
	HTTPClient *http.Client
}

// newModelsCmd builds `agentteam models`; runF, when not nil, replaces runModels.
func newModelsCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*ModelsOptions) error) *cobra.Command {
	opts := &ModelsOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "models",
		Short: "List the models the configured provider serves (GET /models)",
		Long: `Ask the model server the settings point at (agentteam config shows them) for its models, with
GET BASE_URL/models and the API key, and print their ids, one per line (--json: a JSON list).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if opts.Timeout <= 0 {
				return exit.Usagef("--timeout must be positive")
			}
			if _, err := launch.LoadConfig(c, g); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runModels(c.Context(), opts)
		},
	}
	c.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Second, "give up when the server has not answered in this time")
	return c
}

func runModels(ctx context.Context, opts *ModelsOptions) error {
	ids := []string{"demo"}
	if !opts.Demo {
		var err error
		if ids, err = listModels(ctx, opts); err != nil {
			return err
		}
	}
	if opts.JSON {
		return json.NewEncoder(opts.IO.Out).Encode(ids)
	}
	if len(ids) == 0 && !opts.Quiet {
		fmt.Fprintln(opts.IO.Err, "the model server lists no models")
	}
	for _, id := range ids {
		if _, err := fmt.Fprintln(opts.IO.Out, id); err != nil {
			return err
		}
	}
	return nil
}

// listModels asks the server for its model ids, sorted.
func listModels(ctx context.Context, opts *ModelsOptions) ([]string, error) {
	base := opts.BaseURL
	if base == "" {
		base = launch.DefaultBaseURL
	}
	shown := launch.RedactURL(base)
	failf := func(format string, a ...any) error {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the model server at %s "+format, append([]any{shown}, a...)...)}
	}
	keyEnv := opts.APIKeyEnv()
	key := opts.Getenv(keyEnv)

	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, modelsURL(base, opts.Provider()), nil)
	if err != nil || req.URL.Host == "" || (req.URL.Scheme != "http" && req.URL.Scheme != "https") {
		return nil, exit.Usagef("the base URL %s is not an http:// or https:// URL", shown)
	}
	req.Header.Set("Accept", "application/json")
	for k, v := range opts.Headers() {
		req.Header.Set(k, v)
	}
	switch p := opts.Provider(); {
	case key == "":
	case p != nil && p.APIKeyHeader.V != "":
		req.Header.Set(p.APIKeyHeader.V, key) // Azure's api-key
	default:
		req.Header.Set("Authorization", "Bearer "+key)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	resp, err := hc.Do(req)
	if err == nil {
		defer resp.Body.Close()
		var body []byte
		body, err = io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		if err == nil {
			ids, err := readModelList(resp, body, keyEnv, key != "")
			if err != nil {
				// A server may quote what it was sent; the key never goes further.
				msg := err.Error()
				if len(key) >= 8 {
					msg = strings.ReplaceAll(msg, key, "[key]")
				}
				return nil, failf("%s", msg)
			}
			return ids, nil
		}
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, failf("did not answer within %s", opts.Timeout)
	case ctx.Err() != nil:
		return nil, &exit.Error{Code: exit.Failure, Err: errors.New("interrupted")}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its text repeats the URL
	}
	return nil, failf("did not answer: %v", err)
}

// modelsURL is base's /models, before a query base carries, with the
// provider's query added (Azure's api-version).
func modelsURL(base string, p *config.Provider) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimRight(base, "/") + "/models" // the request refuses it
	}
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/")+"/models", ""
	if p != nil && len(p.Query) > 0 {
		q := u.Query()
		for k, v := range p.Query {
			q.Set(k, v.V)
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// readModelList reads a /models answer: an OpenAI-style {"data": [{"id": …}]}.
func readModelList(resp *http.Response, body []byte, keyEnv string, keySet bool) ([]string, error) {
	trimmed := bytes.TrimSpace(body)
	if strings.Contains(resp.Header.Get("Content-Type"), "text/html") || bytes.HasPrefix(trimmed, []byte("<")) {
		return nil, fmt.Errorf("answered %s with an HTML page, not the API: check the base URL (OpenAI-compatible APIs usually end in /v1)", resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		s := "answered " + resp.Status
		if m := serverMessage(trimmed); m != "" {
			s += ": " + m
		}
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			if keySet {
				s += " (the key is taken from " + keyEnv + ")"
			} else {
				s += " (" + keyEnv + " is not set)"
			}
		}
		return nil, errors.New(s)
	}
	var list struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(trimmed, &list); err != nil || list.Data == nil {
		return nil, errors.New(`did not answer with a model list (JSON with a "data" array)`)
	}
	ids := []string{}
	for _, m := range *list.Data {
		if m.ID != "" {
			ids = append(ids, m.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

// serverMessage is the server's own words in an error body: OpenAI's
// {"error": {"message": …}}, {"error": "…"}, {"message": …}, {"detail": …},
// a JSON array of those (Gemini), or the first line of plain text.
func serverMessage(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return event.FirstLine(string(body), 200)
	}
	return event.FirstLine(messageIn(v), 300)
}

func messageIn(v any) string {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if m := messageIn(e); m != "" {
				return m
			}
		}
	case map[string]any:
		if e, ok := t["error"]; ok {
			if s, ok := e.(string); ok && s != "" {
				return s
			}
			if m := messageIn(e); m != "" {
				return m
			}
		}
		for _, k := range []string{"message", "detail", "error_description"} {
			if s, ok := t[k].(string); ok && s != "" {
				return s
			}
		}
	}
	return ""
}
