"""The app's Qt views: results table, heatmap, chemical-space map, plots, settings form, dialogs,
report tabs and scaffold groups. They show what they are given and emit what the user does."""
