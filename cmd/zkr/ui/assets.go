package ui

import "embed"

// Assets is the page: assets/index.html, app.js and app.css.
//
//go:embed assets
var Assets embed.FS
