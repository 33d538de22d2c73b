import Foundation
import ToneShaperLibrary

/// Where the page's files are: `TONESHAPER_EDITOR_PAGE`, an installed copy
/// (PREFIX/share/toneshaper/editor, what install.sh makes), else the checkout's
/// Sources/ToneShaperEditor/Page for a program run from its build folder. The page is plain files
/// found from the real executable, not a resource bundle: `Bundle.module` stops the program when
/// its bundle is missing, as it is once the build folder is gone.
enum EditorPage {
    static func folder() throws(LibraryError) -> String {
        try InstallLayout.folder(.editorPage)
    }
}
