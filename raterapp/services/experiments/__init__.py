"""An experiment's life as its owner sees it: the uploads checked and stored, the spec, its
creation with a budget, what the owner changes later, and the deletion of a failed one."""
