package fetch

// Drop removes rawURL's body from the run's cache: a caller that reads each
// of many large files once (the page images of a book) keeps the cache
// from holding them all. A later Get fetches it again.
func (f *Fetcher) Drop(rawURL string) {
	f.mu.Lock()
	delete(f.cache, rawURL)
	f.mu.Unlock()
}
