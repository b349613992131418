// Package panel is the chat screen's side panes and what they show of
// work under way:
//   - Team: the lead and every teammate, one row each (status readable
//     without colour, time at work, model, context, tokens, cost, unread
//     mail, branch or writes), and the pool gauge;
//   - Feed: the messages between agents, newest at the bottom;
//   - Progress: who works since when, the spinner's frame (a TickMsg
//     only while somebody works) and each agent's context size against
//     its model's window.
//
// Each renders exactly the lines it is given; none does IO.
package panel
