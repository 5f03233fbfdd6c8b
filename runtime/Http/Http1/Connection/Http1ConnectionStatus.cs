using System;

namespace Falconet.Http.Http1;

/// <summary>
/// Where an HTTP/1.1 connection is in its life, as its loop moves it along (<see cref="HttpConnection"/>): between
/// requests, waiting for one, receiving a head, handling a request, closing. Each status says which deadline runs. Only the
/// loop writes it; the server's threads read it (a stopping server closes a connection only while it waits for a request
/// or lingers) and act on the loop through <see cref="Http1ConnectionSignals"/>.
/// </summary>
/// <remarks>
/// The usual course of a keep-alive connection: <see cref="RequestNotStarted"/>, then <see cref="HandlingRequest"/> for every
/// request whose head was received whole, back to <see cref="RequestNotStarted"/>, and <see cref="WaitingForRequest"/> once
/// a read batch is answered and nothing of the next request is there. A head that arrives in pieces passes through
/// <see cref="ReceivingRequestLine"/> and <see cref="ReceivingHeaders"/>. A connection the server closes ends in
/// <see cref="ClosingAfterResponse"/> and <see cref="Lingering"/>; one the client closes, or that is reset, just ends.
/// </remarks>
internal enum Http1ConnectionStatus : byte
{
    /// <summary>
    /// Between requests: the previous response is written (or there was none yet) and nothing of the next request has been
    /// parsed. What is buffered is parsed next; no deadline runs.
    /// </summary>
    RequestNotStarted,

    /// <summary>
    /// Idle: every response is sent, nothing of the next request has arrived, and the connection waits for it. The
    /// keep-alive deadline runs; a stopping server closes the connection now, without an answer.
    /// </summary>
    WaitingForRequest,

    /// <summary>
    /// Part of a request line has arrived, not the whole line (it is parsed once complete). The request-headers deadline
    /// runs from here, armed once for the head.
    /// </summary>
    ReceivingRequestLine,

    /// <summary>
    /// The request line is parsed, the header section is not complete yet. The request-headers deadline runs (armed when the
    /// head first waited for more bytes).
    /// </summary>
    ReceivingHeaders,

    /// <summary>
    /// The head is complete: the application runs, its response is written, the rest of its body is drained. No deadline
    /// runs (the minimum data rates apply to the body and the response).
    /// </summary>
    HandlingRequest,

    /// <summary>
    /// The server closes after the response just written (the request asked to, it was refused, a deadline passed, the
    /// server stops): once it is sent, the connection lingers unless it was reset or the client already closed.
    /// </summary>
    ClosingAfterResponse,

    /// <summary>
    /// Lingering close (RFC 9112 section 9.6): the sending side is shut down and what the client still sends is read and
    /// discarded, until it closes, the linger deadline passes or the byte bound is reached. A stopping server ends it now.
    /// </summary>
    Lingering,
}

/// <summary>
/// What other threads ask of a connection's loop (the application, the heartbeat, a stopping server), at any time: flags
/// set once and never cleared, read by the loop at its next step. Not statuses, since the loop alone writes
/// <see cref="Http1ConnectionStatus"/>.
/// </summary>
[Flags]
internal enum Http1ConnectionSignals
{
    None = 0,

    /// <summary>The connection is to be reset instead of closed gracefully (the application aborted, the shutdown timeout passed, the client reads too slowly).</summary>
    AbortRequested = 1,

    /// <summary>
    /// Its receive was stopped to wake the loop (a deadline passed or was expired by a stopping server, a body arrives too
    /// slowly): every later receive returns 0, which is then not the client's close.
    /// </summary>
    ReceiveStopped = 2,
}
