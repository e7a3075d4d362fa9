package sandbox

// Unavailable is empty where the scheme runs: Linux has every layer it needs.
const Unavailable = ""
