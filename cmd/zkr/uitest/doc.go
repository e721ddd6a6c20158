// Package uitest tests zkr ui in a real browser: headless Chromium (Debian's
// chromium package, installed by make deps) driven with chromedp, against a real
// ZooKeeper started by zktest and a zkr binary built from this repository.
//
// It is a module of its own, as bench/ is, so that the browser driver stays out
// of the library's module graph. The tests keep their screenshots in
// build/ui-screenshots at the repository's root (or $ZKR_UI_SCREENSHOTS); with
// ZKR_UI_MEASURE=1, TestMeasure logs the page's first paint and heap at 10,000
// and 100,000 nodes and the time from a change to the page showing it.
package uitest
