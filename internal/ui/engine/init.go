package engine

// InitPrompt is what /init says to the lead for the person: a message of
// theirs, shown as one, that asks for the project's AGENTS.md.
const InitPrompt = `Write an AGENTS.md file at the root of this project for the agents that will work in it: you, your teammates, and other coding agents.
First look around: the layout, the languages, how it is built, tested and linted, and the conventions its code follows (the README, the build files, the CI configuration, a few source files).
Then write AGENTS.md in short sections: the project in a few lines; where things are; the commands that build, test and run it; the code's style and conventions; what to be careful about.
Keep it short and particular to this project: what an agent needs to know here, not general advice. If an AGENTS.md is there already, improve it, keeping what is still true.`
