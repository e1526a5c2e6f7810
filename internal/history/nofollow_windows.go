package history

// createNoFollow is nothing on Windows: O_CREATE|O_EXCL is CREATE_NEW there, which fails on any
// existing name, a symbolic link or junction included, and so never follows one.
const createNoFollow = 0
