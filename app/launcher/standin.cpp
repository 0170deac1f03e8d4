// Intentionally empty: the body of every stand-in library (cmake/StandInLibraries.cmake). libtorch names these
// libraries in its DT_NEEDED entries but imports nothing from them, so a library that defines nothing satisfies
// the loader and spares the program their dependency trees.
