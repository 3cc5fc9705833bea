import EventLog
import VirtualTourist

/// What to do next, added to an error's message: the library says what went wrong, the
/// command line knows which command helps.
enum ErrorHints {
    static func message(for error: any Error) -> String? {
        guard let error = error as? DomainError else { return nil }
        let hint: String? =
            switch error.code {
            case .unknownPin: "`vt pins` lists the pins on the map"
            case .unknownPhoto: "`vt album PIN` lists the album's photos and their ids"
            case .albumBusy: "wait for the album to finish (vt album PIN), then try again"
            case .undecodableEvent: "this store may come from a newer version of vt; `vt verify` says more"
            case .storage:
                switch (error.cause as? LogError)?.code {
                case LogError.Code.locked?: "another program (the web app, or another vt) has the store open for changes; close it first, or use a read-only command"
                case LogError.Code.corrupt?: "`vt verify` shows the damage and `vt repair` cuts it off, keeping a copy"
                default: nil
                }
            default: nil
            }
        return hint.map { "\(error)\nhint: \($0)" } ?? "\(error)"
    }
}
