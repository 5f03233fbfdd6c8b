using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;
/// <summary>
/// The stream <see cref="System.Net.Security.SslStream"/> reads records from and writes records to: a thin adapter over
/// the inner <see cref="TransportConnection"/> that keeps the transport contract (one receive and one send at a time).
/// </summary>
/// <remarks>
/// <para>
/// Reads. SslStream first asks for zero bytes (to learn that data is there without holding its buffer) and then reads
/// into its own buffer. The transport contract has no zero-byte receive (0 means end of stream), so a zero-byte read
/// receives into one pool block instead: an idle connection waits with a pinned pool block, not with SslStream's larger
/// buffer, and the next read copies those bytes out (the one copy TLS adds on receive, at most a block per wait). Other
/// reads receive straight into SslStream's buffer, pinned while the receive is pending (libuv reads into it later).
/// </para>
/// <para>
/// Writes. Records are appended to pool blocks (a queue) and leave through one inner send at a time, gathered up to the
/// inner connection's <see cref="TransportConnection.MaxGatheredSegments"/>: <see cref="Push"/> starts a send when
/// enough is queued (<see cref="TlsConnection"/> while it encrypts a batch; SslStream's flush for handshake messages and
/// alerts), and a send's completion starts the next one with whatever was queued meanwhile, so encrypting and sending
/// overlap. <see cref="WaitUntilQueuedAtMostAsync"/> is the backpressure: it completes once the socket took enough.
/// </para>
/// <para>
/// Pending calls. A read or a wait that has to wait completes through a reusable awaitable of this stream (one for
/// reads, one for the send wait) driven by the inner operation's continuation, not through a pooled async method: with
/// <see cref="IoScheduling.ThreadPool"/> the inner completion runs on another thread than the call, and a pooled box
/// rented on one thread and returned on another misses the pool's per-thread cache and is allocated anew.
/// </para>
/// </remarks>
internal sealed partial class TlsTransportStream : Stream, IValueTaskSource<int>, IValueTaskSource
{
    /// <summary>The first byte of a TLS record carrying a handshake message (content type 22).</summary>
    internal const byte HandshakeRecordType = 22;

    private readonly TransportConnection _inner;
    private bool _endOfStream;

    public TlsTransportStream(TransportConnection inner)
    {
        _inner = inner;
        _output = new BlockChain(inner.Pool);
        _maxSegments = Math.Max(1, inner.MaxGatheredSegments);
        _onReadCompleted = OnReadCompleted;
        _onSendCompleted = OnSendCompleted;
    }

    /// <summary>The first byte the peer sent (-1 before any): a TLS client starts with <see cref="HandshakeRecordType"/>.</summary>
    public int FirstByte { get; private set; } = -1;

    /// <summary>True once the inner connection reported the end of its stream.</summary>
    public bool EndOfStream => _endOfStream;

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    // ---- Not supported: SslStream is used only through its asynchronous API ----

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    /// <summary>Returns the blocks (once nothing is pending on the inner connection anymore).</summary>
    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            ReleasePrefetch();
            ReleaseBulk();
            lock (_outputGate)
            {
                _output.Dispose();
            }
        }

        base.Dispose(disposing);
    }
}
