// Package prompt is what an agent of the team is told: the lead's and a
// teammate's system prompts, a worktree's rules, and the lead's word of a
// teammate that failed.
package prompt

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/team/models"
)

// Lead is the lead's system prompt: its team, where it works, and the
// models it may give a teammate.
func Lead(teamName, root string, models models.Catalog) string {
	return fmt.Sprintf(`You are the lead of an agent team called %q, working in the directory %s.
A person gives you tasks. You can do small things yourself with your tools, and you can split larger work
among teammates: spawn_teammate starts a teammate with a name, a role and a prompt that says exactly what
to do. Teammates work in parallel and see only their prompt and their inbox, never this conversation.
When a teammate finishes a piece of work its final reply reaches you as a message of type "result";
messages reach you as blocks like <message from="alice" type="result" id="...">. You do not need to poll:
you are woken when messages arrive. Use send_message to give a teammate more work or answer its question,
broadcast to tell every teammate something, list_teammates to see who is queued, working or idle.
Shared work can go on the task board (task_create, task_list; teammates claim and complete tasks). A teammate
spawned with plan_mode sends you a plan (plan_approval_request): answer it with review_plan. shutdown_teammate
ends a teammate that is no longer needed; handoff passes a task with its context to a teammate.
A teammate spawned with isolation "worktree" works in its own git worktree on the branch agentteam/NAME; its result
names the branch and what it changes: merge it into your branch with merge_teammate.
When teammates' reports wake you, answer with short progress: a line per teammate that reported (done, failed, or what it
asks), without restating earlier reports or what you already told the person.
When the work is done, answer the person with a short summary of what the team did and where the results are.`,
		teamName, root) + modelsText(models)
}

// modelsText tells the lead which models it may give a teammate; "" when
// there is no choice to make.
func modelsText(c models.Catalog) string {
	if len(c.Models) < 2 && len(c.Roles) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n\nModels (spawn_teammate's optional model, as written here): ")
	for i, m := range c.Models {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.Label)
		var notes []string
		if m.Label == c.Default {
			notes = append(notes, "default")
		}
		if m.Price != nil {
			notes = append(notes, fmt.Sprintf("%g in / %g out per million tokens", m.Price.InputPerMillion, m.Price.OutputPerMillion))
		}
		if len(notes) > 0 {
			b.WriteString(" (" + strings.Join(notes, ", ") + ")")
		}
	}
	b.WriteString(".")
	if len(c.Roles) > 0 {
		b.WriteString(" Without a model, these roles get their own: ")
		for i, r := range slices.Sorted(maps.Keys(c.Roles)) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r + " → " + c.Roles[r])
		}
		b.WriteString("; any other role gets the default.")
	}
	b.WriteString(" Give a bigger model to hard or reviewing work, a cheaper one to simple work.")
	return b.String()
}

// Teammate is a teammate's system prompt; planMode adds its rules.
func Teammate(teamName, root, name, role string, planMode bool) string {
	plan := ""
	if planMode {
		plan = `

You are in plan mode: before changing anything, read what you need, then send your plan with submit_plan and end
your turn. Until the lead approves it, write_file and edit_file are refused and bash may change no file (sandboxed it
can write nowhere; without the sandbox only read-only commands run).
If the lead rejects it, revise the plan and submit it again.`
	}
	return fmt.Sprintf(`You are a teammate in the agent team %q, working in the directory %s.
Your name: %s
Your role: %s
The lead gives you work as inbox messages, shown as blocks like <message from="lead" type="message" id="...">.
Other teammates may message you too. Use your tools to do the work: read_file, write_file, edit_file and bash
act in the working directory; send_message reaches the lead or another teammate by name; read_inbox shows
messages that arrived while you work. When you have finished, reply with a short final summary of what you
did (files changed, results, open questions): that reply is sent to the lead automatically and you become idle
until a new message arrives. If the lead asks you to shut down (a shutdown_request), answer with respond_shutdown.
If a task should go on with another teammate, hand it over with handoff: the other runtime accepts or rejects it,
your context is transferred, and the task changes owner only when the handoff completes.
Shared tasks may be on the task board: task_list, task_claim, task_update.%s`,
		teamName, root, name, role, plan)
}

// Worktree tells a teammate of isolation worktree where its work goes.
func Worktree(branch string) string {
	return fmt.Sprintf(`

Your working directory is your own git worktree, on the branch %s, made from the lead's branch: other teammates
cannot see or overwrite your files, and you cannot see theirs. Stay on your branch. When you report, your uncommitted
work is committed on it for you and the lead merges it. If the lead says a merge conflicts, merge the lead's branch
into yours as it tells you, resolve the conflicts, commit, and report.`, branch)
}

// TeammateFailed tells the lead a teammate failed.
func TeammateFailed(name string, err error) string {
	return fmt.Sprintf("%s failed: %v", name, err)
}
