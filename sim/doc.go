// Package sim is borg's learning simulator (borg eval learning): a
// deterministic team of engineers whose agents ask lessons, react to them
// according to a hidden truth, and write the outcome log through the real
// store, so that the real usefulness dynamics (domain) and the real
// retrieval (index) can be judged by numbers rather than taken on faith.
//
// # The scenario
//
// A synthetic corpus of lessons about a handful of engineering topics, each
// topic split into subtopics with their own vocabulary, so the lexical and
// vector arms have real text to match. Every lesson carries a hidden effect:
// it helps, is neutral, harms, or helps only in one repo (and misleads
// elsewhere). A task (an engineer, a repo, a topic and subtopic) is relevant
// to the lessons of its subtopic (1.0) and, less, to the rest of its topic
// (0.3). Reactions (changed, ignored, corrected, vetoed, tested, regret,
// censored, placebo) are drawn from that truth with noise, with common random
// numbers per (session, lesson) so every policy meets the same luck.
//
// # The judge
//
// Whether the agent acted on a lesson is hidden; what is recorded is what
// the product's judge reads (Options.Judge). The default, JudgeDefault, is
// the hooks' default judge: the agent declares (an over-declaring agent says
// "applies" of a third of the lessons it ignored; AgentYesSayer says it of
// everything), the word rule fires on a lesson the agent acted on most of
// the time and by chance at the seed's measured 38% otherwise (more for a
// lesson close to the task), and domain.DefaultVerdict turns that into a
// result credited by each engineer's placebo tally (one tally per engineer,
// as one per machine; the simulator counts each reading as it is judged,
// the hooks a stop's readings at once, and it leaves corrected and vetoed
// asks out, whose verdict is the engineer's).
// Corrections and vetoes are the engineer's, not the judge's. JudgePerfect
// reads the truth with 5% noise: an upper bound, not the product.
//
// # The policies
//
// Every policy sees the same task stream and keeps its own store, log and
// ledger: borg (index.Search with the ledger's memories, the relative bar
// and the session's Thompson draw), relevance (the same search with neutral
// usefulness), count (the relevance candidates re-ranked by successes),
// recency (the lesson written or asked last, no outcome at all), random (a
// seeded sample of the candidates), last-use (by the latest changed result:
// activation's input without the belief, a stronger baseline than the four
// simple ones), borg-rerank (a diagnostic: borg's usefulness weight, the
// session's draw, ordering the relevance candidates alone, without the
// index's fusion, bar and dormancy filter) and the oracle (the truly best
// lessons for the task). Regret is the expected value
// the oracle's choice gets minus the policy's, summed over sessions.
//
// The package composes domain, memfs and index; only cmd imports it.
package sim
