"""VRML97 syntax: the grammar, the parser into a node tree, name scopes (DEF/USE, PROTO, IS)
and reading files with their Inlines. What the nodes mean to OpenHRP is modelloader.openhrp's."""
