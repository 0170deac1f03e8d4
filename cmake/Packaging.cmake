# Installation layout and a CPack .deb for offline machines: binaries, the bundled model, the desktop entry,
# AppStream metadata, hicolor icons, dragoman-cli's man page (from its --help, when help2man is there), and the
# copyright and changelog Debian expects.
include(GNUInstallDirs)
install(DIRECTORY resources/models DESTINATION ${CMAKE_INSTALL_DATADIR}/dragoman OPTIONAL)
install(FILES resources/languages.json DESTINATION ${CMAKE_INSTALL_DATADIR}/dragoman)
install(FILES installer/dragoman.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES resources/io.github.dragoman.Dragoman.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES resources/icons/dragoman.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(DIRECTORY resources/icons/hicolor/ DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor)
# Debian's copyright file: where the licenses NOTICE names are found on the system, then NOTICE itself.
set(DRAGOMAN_COPYRIGHT ${CMAKE_BINARY_DIR}/debian/copyright)
add_custom_command(OUTPUT ${DRAGOMAN_COPYRIGHT}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian
                   COMMAND cat ${PROJECT_SOURCE_DIR}/installer/copyright-header ${PROJECT_SOURCE_DIR}/NOTICE > ${DRAGOMAN_COPYRIGHT}
                   DEPENDS ${PROJECT_SOURCE_DIR}/installer/copyright-header ${PROJECT_SOURCE_DIR}/NOTICE VERBATIM)
add_custom_target(debian_copyright ALL DEPENDS ${DRAGOMAN_COPYRIGHT})
install(FILES ${DRAGOMAN_COPYRIGHT} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/dragoman)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/dragoman)

# Debian wants documentation compressed reproducibly (gzip -9n).
set(DRAGOMAN_CHANGELOG ${CMAKE_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${DRAGOMAN_CHANGELOG} COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/installer/changelog > ${DRAGOMAN_CHANGELOG}
                   DEPENDS ${PROJECT_SOURCE_DIR}/installer/changelog VERBATIM)
add_custom_target(debian_changelog ALL DEPENDS ${DRAGOMAN_CHANGELOG})
install(FILES ${DRAGOMAN_CHANGELOG} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/dragoman)

find_program(HELP2MAN help2man)
if(HELP2MAN)
    set(DRAGOMAN_MAN_PAGE ${CMAKE_BINARY_DIR}/dragoman-cli.1.gz)
    add_custom_command(
        OUTPUT ${DRAGOMAN_MAN_PAGE}
        COMMAND ${PROJECT_SOURCE_DIR}/installer/man_page.sh $<TARGET_FILE:dragoman-cli> ${CMAKE_BINARY_DIR}/dragoman-cli.1
        COMMAND gzip -9n -f ${CMAKE_BINARY_DIR}/dragoman-cli.1
        # The program and the developer commands it opens write the --help texts (the launcher only starts it).
        DEPENDS dragoman-cli dragoman-cli-program devcli ${PROJECT_SOURCE_DIR}/installer/man_page.sh
        COMMENT "dragoman-cli(1) from its --help"
        VERBATIM)
    add_custom_target(man_page ALL DEPENDS ${DRAGOMAN_MAN_PAGE})
    install(FILES ${DRAGOMAN_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()
# The window's page is written by hand (it has one argument).
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/dragoman.1.gz
                   COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/installer/dragoman.1 > ${CMAKE_BINARY_DIR}/dragoman.1.gz
                   DEPENDS ${PROJECT_SOURCE_DIR}/installer/dragoman.1 VERBATIM)
add_custom_target(window_man_page ALL DEPENDS ${CMAKE_BINARY_DIR}/dragoman.1.gz)
install(FILES ${CMAKE_BINARY_DIR}/dragoman.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
if(NOT HELP2MAN)
    message(STATUS "help2man not found: dragoman-cli's man page is not built")
endif()

set(CPACK_PACKAGE_NAME dragoman)
set(CPACK_PACKAGE_VENDOR "Dragoman developers")
set(CPACK_PACKAGE_CONTACT "Dragoman developers <dragoman@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "offline desktop translator for text and documents")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "Dragoman translates text and documents on machines that must stay offline.\n"
    "The translation streams into the window word by word while the model runs\n"
    "on the local computer. It runs HY-MT and OPUS-MT models from their Hugging\n"
    "Face folders and ships a small English, German and Chinese model.\n"
    "dragoman-cli translates batches and pipes and serves the OpenAI and\n"
    "LibreTranslate APIs.")
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION text)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/dragoman/dragoman")
include(CPack)
