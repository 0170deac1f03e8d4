# Installation layout and a CPack .deb for offline machines.
include(GNUInstallDirs)
install(DIRECTORY resources/models DESTINATION ${CMAKE_INSTALL_DATADIR}/dragoman OPTIONAL)
install(FILES resources/languages.json DESTINATION ${CMAKE_INSTALL_DATADIR}/dragoman)
install(FILES installer/dragoman.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES resources/icons/dragoman.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)

set(CPACK_PACKAGE_NAME dragoman)
set(CPACK_PACKAGE_CONTACT "Dragoman developers")
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread")
include(CPack)
