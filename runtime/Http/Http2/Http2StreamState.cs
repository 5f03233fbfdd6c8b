namespace Falconet.Http.Http2;

/// <summary>
/// The states of an HTTP/2 stream the server takes part in (RFC 9113 section 5.1; a server that never pushes has no
/// reserved states). Changed only under the connection's lock.
/// </summary>
/// <remarks>
/// <code>
///                 HEADERS received
///      idle ─────────────────────────► open
///                                     │    │
///       END_STREAM received (request) │    │ END_STREAM sent (response)
///                                     ▼    ▼
///                  half-closed (remote)    half-closed (local)
///                                     │    │
///              END_STREAM sent        │    │  END_STREAM received
///                                     ▼    ▼
///                                     closed  ◄── RST_STREAM sent or received, from any state
/// </code>
/// A closed stream may still have a handler running (its client reset it, or the server answered before reading the
/// whole body): the stream object goes back to the connection's pool only when both are done.
/// </remarks>
internal enum Http2StreamState : byte
{
    /// <summary>Not in use (in the connection's pool, or not yet opened).</summary>
    Idle,

    /// <summary>The request head arrived; both sides may still send.</summary>
    Open,

    /// <summary>The request is complete (END_STREAM received); the response is still being sent.</summary>
    HalfClosedRemote,

    /// <summary>The response is complete (END_STREAM sent); request body bytes may still arrive.</summary>
    HalfClosedLocal,

    /// <summary>Both sides ended, or the stream was reset.</summary>
    Closed,
}

/// <summary>How a stream came to be closed: what the connection answers to frames that arrive for it later.</summary>
internal enum Http2StreamClosure : byte
{
    /// <summary>Both sides sent END_STREAM: a later frame is STREAM_CLOSED (RFC 9113 section 5.1, "closed").</summary>
    Ended,

    /// <summary>The client reset it: a later frame but PRIORITY is a stream error STREAM_CLOSED.</summary>
    ResetByPeer,

    /// <summary>The server reset it: frames the client sent before it knew are ignored (their DATA still counts toward the window).</summary>
    ResetByServer,
}
