// Package sleep is the memory's nightly maintenance: a pure plan built from
// one snapshot of the store and log, then one reviewable git commit per phase
// on a sleep branch (confidence decay, reprieve, near-duplicate merge, frame
// conflicts, edge typing, retention triage, link ager).
package sleep
