using System;
using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport.Proxy;
using Falconet.Transport.Tls;

namespace Falconet.Transport;

/// <summary>One accepted connection: receive into memory, send a sequence of blocks in one gathered call, abort or close.</summary>
/// <remarks>
/// A pending operation resumes where the transport delivers its completion: on the completing thread, or on the
/// connection's own I/O or loop thread where the transport has one; <see cref="Schedule"/> runs work the same way. At most one receive and one send may be pending at a time (they may overlap each other). Failures surface as
/// <see cref="ConnectionResetException"/> (the peer reset), <see cref="ConnectionAbortedException"/> (the
/// connection was aborted or disposed locally) or another <see cref="System.IO.IOException"/>; cancelling a
/// pending operation aborts the connection and throws <see cref="OperationCanceledException"/>.
/// </remarks>
public abstract class TransportConnection : IAsyncDisposable
{
    /// <summary>The local endpoint, when known.</summary>
    public abstract EndPoint? LocalEndPoint { get; }

    /// <summary>The remote endpoint, when known.</summary>
    public abstract EndPoint? RemoteEndPoint { get; }

    /// <summary>The pool this connection rents its receive and send blocks from (its I/O or loop thread's pool, where it has one).</summary>
    public abstract SlabMemoryPool Pool { get; }

    /// <summary>Receives into <paramref name="buffer"/> (normally a pool block's free space); 0 when the peer closed its side or the connection was aborted locally. No Task is allocated per call.</summary>
    public abstract ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default);

    /// <summary>Sends every segment of <paramref name="buffers"/> in one gathered call; completes when the system took all bytes. No Task is allocated per call.</summary>
    public abstract ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default);

    /// <summary>
    /// Runs <paramref name="workItem"/> where the connection runs: on the thread pool, or on the connection's own I/O or
    /// loop thread where the transport has one (so that code started there rents and returns <see cref="Pool"/> blocks
    /// on the owner path). A server starts each accepted connection's processing with it, never on its accept loop.
    /// </summary>
    public abstract void Schedule(IThreadPoolWorkItem workItem);

    /// <summary>
    /// True when the calling thread is where this connection's code is meant to run: its I/O thread, or any thread
    /// when the transport continues connection code wherever an operation completed (no I/O thread). Code that resumed
    /// elsewhere (a handler that completed on a timer or the thread pool) comes back through <see cref="Schedule"/>.
    /// </summary>
    public virtual bool IsOnIoThread => true;

    /// <summary>
    /// True when the calling thread is the connection's own I/O thread (a loop or lane that runs connection code inline):
    /// a thread that blocks there waiting for this connection's bytes stops the I/O that would deliver them. False where
    /// completions run on the thread pool.
    /// </summary>
    internal virtual bool IsOwnIoThread => false;

    /// <summary>
    /// True when the code that continues after a pending receive or send is posted to the thread pool, so it runs on some
    /// pool thread rather than where the operation completed (libuv with <see cref="IoScheduling.ThreadPool"/>). A layer
    /// that keeps per-thread pooled state across such an await (SslStream's pooled async boxes) would rent on one thread
    /// and return on another. False by default; a decorator passes its inner connection's value through.
    /// </summary>
    public virtual bool CompletesOnThreadPool => false;

    /// <summary>
    /// The most segments one <see cref="SendAsync"/> hands the system in a single gathered call without allocating; a layer
    /// that builds its own sends (the TLS decorator's records) keeps each within it. <see cref="DefaultMaxGatheredSegments"/>
    /// by default: what .NET's sockets gather on Linux on the stack; above it they pin every buffer with a GCHandle and
    /// allocate the handle and iovec arrays per call. A transport that fills its own iovec arrays says more (every built-in
    /// one on Linux: IOV_MAX); a decorator says what its own sends take.
    /// </summary>
    public virtual int MaxGatheredSegments => DefaultMaxGatheredSegments;

    /// <summary>The default of <see cref="MaxGatheredSegments"/>: 8 segments, .NET's sockets' stack threshold on Linux.</summary>
    public const int DefaultMaxGatheredSegments = 8;

    /// <summary>
    /// True when <see cref="WaitForDataAsync"/> waits without memory of the caller's: the connection then holds no receive
    /// buffer while its peer is quiet, and an idle keep-alive connection costs no pool block.
    /// </summary>
    internal virtual bool CanWaitForData => false;

    /// <summary>
    /// Completes (with 0) once a receive would not wait: bytes arrived, the peer closed its side, the receive failed or was
    /// stopped, or the connection closed; the <see cref="ReceiveAsync"/> that follows tells which. Completes at once where
    /// <see cref="CanWaitForData"/> is false. A pending wait counts as the connection's one pending receive.
    /// </summary>
    internal virtual ValueTask<int> WaitForDataAsync(CancellationToken ct) => new(0);

    /// <summary>
    /// The smallest HTTP/1.1 body write that ends the declared Content-Length and is sent from the caller's memory rather
    /// than copied into the output blocks, when it is smaller than the 32 KiB from which every write is. None by default:
    /// on a plain connection the copy costs less than the send of its own that the write takes. The TLS decorator says 4
    /// KiB: it encrypts from the caller's memory into records anyway, and keeps the records of the head and of what was
    /// buffered before the write for the write's own send (<see cref="SendBeforeMoreAsync"/>), so both cost one send.
    /// </summary>
    internal virtual int MinLastWriteFromCallerMemory => int.MaxValue;

    /// <summary>
    /// Sends <paramref name="buffers"/>, which another send follows at once (the head of a response whose body is sent
    /// from the caller's memory): a connection that can keep them for that send does, so both leave in one system call,
    /// and completes once it no longer needs the caller's buffers; by default this is <see cref="SendAsync"/>. What is kept
    /// goes out with the next send, or with close_notify at a graceful close.
    /// </summary>
    internal virtual ValueTask SendBeforeMoreAsync(ReadOnlySequence<byte> buffers, CancellationToken ct) => SendAsync(buffers, ct);

    /// <summary>
    /// What the TLS handshake of this connection negotiated; null for a connection without TLS. Connections handed out by
    /// the TLS decorator's listener carry it (the handshake is complete by then); a decorator over one passes it through.
    /// </summary>
    public virtual TlsConnectionInfo? TlsInfo => null;

    /// <summary>
    /// What the PROXY protocol header of this connection said (version, command, addresses, TLVs); null on an endpoint without
    /// PROXY. The PROXY decorator sets it and makes the client's address the <see cref="RemoteEndPoint"/>; a decorator over
    /// it (TLS) passes both through.
    /// </summary>
    public virtual ProxyProtocolInfo? ProxyInfo => null;

    /// <summary>
    /// The application protocol negotiated with ALPN ("http/1.1", later "h2"), or default when none was (a plain
    /// connection, or a TLS client that offered none): the server picks each connection's HTTP protocol from it.
    /// </summary>
    public virtual SslApplicationProtocol NegotiatedApplicationProtocol => TlsInfo?.ApplicationProtocol ?? default;

    /// <summary>
    /// Stops receiving without closing: a pending receive completes soon (with bytes that had already arrived,
    /// or 0), and every later receive returns 0. Sending, <see cref="Abort"/> and <see cref="DisposeAsync"/> still
    /// work, so a timed-out connection can still answer and close gracefully. Any thread may call it.
    /// </summary>
    public abstract void StopReceiving();

    /// <summary>
    /// Shuts down the sending side (FIN after the bytes already sent) and keeps receiving: the peer reads the end of
    /// the stream while it may still be sending, so a close that follows once it stopped loses nothing (lingering close).
    /// </summary>
    public abstract void ShutdownSend();

    /// <summary>Closes at once with a reset (RST); a pending receive returns 0 and a pending send fails. Any thread may call it; call <see cref="DisposeAsync"/> afterwards.</summary>
    public abstract void Abort();

    /// <summary>
    /// Closes gracefully (shuts down the sending side, so the peer reads what was sent, then end of stream), then
    /// completes once no receive or send is pending anymore: a pending one has failed or returned 0 and its
    /// continuation has run, so the memory it was given can go back to the pool. Call it once, at the end, also
    /// after <see cref="Abort"/>.
    /// </summary>
    public abstract ValueTask DisposeAsync();
}
