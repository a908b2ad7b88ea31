// Package index is borg's derived, rebuildable search state: the bleve
// lexical index, the vector sidecar and its embedder, and the retrieval
// pipeline (arms → weighted RRF → usefulness → MMR). Deleting the store's
// .borg/ folder loses nothing: the index rebuilds what it needs.
package index
