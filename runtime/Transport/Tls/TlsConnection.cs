using System;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport.Tls.OpenSsl;

namespace Falconet.Transport.Tls;

/// <summary>
/// TLS over another <see cref="TransportConnection"/>, with the same contract: the HTTP layer receives plaintext into its
/// pool blocks and sends a batch of blocks in one call, and never learns that records are encrypted underneath.
/// </summary>
/// <remarks>
/// <para>
/// An engine does the protocol: <see cref="SslStream"/> (the platform's OpenSSL on Linux, through memory BIOs), or
/// OpenSSL called directly (<see cref="OpenSslSession"/>: its BIO writes records straight into the record stream's pool
/// blocks and reads ciphertext from the received block). A receive is one read of the engine straight into the caller's
/// block. A send encrypts the batch into records (appended to pool blocks by
/// <see cref="TlsTransportStream"/>): the first at most a block, full-size ones after it, and encrypts the next records
/// while earlier ones are being sent, up to a bound of bytes in flight; a pipelined batch of small responses costs one
/// system call as on a plain connection.
/// </para>
/// <para>
/// The contract's promises hold: <see cref="StopReceiving"/> stops the inner receive, so a pending read wakes with 0;
/// <see cref="ShutdownSend"/> and a graceful <see cref="DisposeAsync"/> send close_notify before the FIN;
/// <see cref="DisposeAsync"/> completes only once no receive or send is pending and their continuations have run.
/// </para>
/// </remarks>
internal sealed partial class TlsConnection : TransportConnection, IValueTaskSource<int>
{
    /// <summary>Plaintext per full-size record: the most TLS allows (RFC 8446 section 5.1, RFC 5246 section 6.2.1).</summary>
    internal const int RecordPayload = 16 * 1024;

    /// <summary>
    /// Plaintext of a batch's first record at most: one block, so the response head and the start of its body can be
    /// decrypted once a few TCP segments arrived (a full record needs more than a new connection's first window).
    /// </summary>
    internal const int FirstRecordPayload = SlabMemoryPool.BlockSize;

    /// <summary>More than what TLS adds to a record (header, explicit nonce or content type, tag: 29 bytes at most for AEAD suites).</summary>
    internal const int RecordOverhead = 64;

    private const int Open = 0;
    private const int Closed = 1;

    private readonly TransportConnection _inner;
    private readonly TlsTransportStream _stream;
    private readonly ServerSslStream? _ssl;
    private readonly OpenSslSession? _openSsl;
    private readonly TlsOperation _receive;
    private readonly TlsOperation _send;
    private int _state;
    private int _aborted;
    private int _receiveStopped;
    private bool _sendShutDown;
    private Task? _closeNotify;
    private TlsConnectionInfo? _info;

    /// <param name="inner">
    /// The connection TLS runs over. A receive waits for the peer's records before it calls SslStream's read when that read
    /// would wait inside (see <see cref="TlsTransportStream.SslStreamNeedsRecords"/>), so that SslStream's read runs where
    /// the bytes arrived and completes at once.
    /// </param>
    /// <param name="maxBytesInFlight">The most record bytes a send keeps queued that the inner connection has not taken yet (<see cref="Falconet.Server.TlsServerOptions.MaxBytesInFlight"/>).</param>
    /// <param name="openSsl">The endpoint's OpenSSL contexts when it runs the OpenSSL engine; null for SslStream.</param>
    public TlsConnection(TransportConnection inner, int maxBytesInFlight = Falconet.Server.TlsServerOptions.DefaultMaxBytesInFlight,
        OpenSslServerContext? openSsl = null)
    {
        _inner = inner;
        _maxBytesInFlight = maxBytesInFlight;
        _sendThreshold = Math.Min((long)inner.MaxGatheredSegments * SlabMemoryPool.BlockSize, maxBytesInFlight / 2);
        _stream = new TlsTransportStream(inner);
        if (openSsl is null)
        {
            _ssl = new ServerSslStream(_stream);
        }
        else
        {
            _openSsl = new OpenSslSession(openSsl, _stream);
        }

        _receive = new TlsOperation(CompleteReceive);
        _send = new TlsOperation(CompleteSend);
        _onBatchStepCompleted = OnBatchStepCompleted;
        _readAfterRecords = new ReadAfterRecords(this);
    }

    /// <summary>The connection TLS runs over.</summary>
    public TransportConnection Inner => _inner;

    /// <summary>The record stream under SslStream (what the peer sent first, whether it ended).</summary>
    internal TlsTransportStream RecordStream => _stream;

    /// <summary>The negotiated parameters; null until the handshake completed.</summary>
    public override TlsConnectionInfo? TlsInfo => _info;

    /// <summary>True when the client certificate was missing or refused during the handshake.</summary>
    internal bool ClientCertificateRejected => _openSsl?.ClientCertificateRejected ?? _ssl!.ClientCertificateRejected;

    /// <summary>The engine that runs the protocol of this connection.</summary>
    internal Falconet.Server.TlsEngine Engine => _openSsl is null ? Falconet.Server.TlsEngine.SslStream : Falconet.Server.TlsEngine.OpenSsl;

    /// <summary>True when the OpenSSL engine refused the SNI host name (no certificate serves it; the client got the alert).</summary>
    internal bool UnknownServerName => _openSsl?.UnknownServerName ?? false;

    public override EndPoint? LocalEndPoint => _inner.LocalEndPoint;

    public override EndPoint? RemoteEndPoint => _inner.RemoteEndPoint;

    public override SlabMemoryPool Pool => _inner.Pool;

    public override Proxy.ProxyProtocolInfo? ProxyInfo => _inner.ProxyInfo;

    public override bool IsOnIoThread => _inner.IsOnIoThread;

    internal override bool IsOwnIoThread => _inner.IsOwnIoThread;

    public override bool CompletesOnThreadPool => _inner.CompletesOnThreadPool;

    /// <summary>Any number: a send encrypts its segments into records, and the records' own sends keep within the inner connection's bound.</summary>
    public override int MaxGatheredSegments => int.MaxValue;

    private bool IsClosedLocally => Volatile.Read(ref _state) != Open;

    /// <summary>Runs the server side of the handshake; <paramref name="selectOptions"/> picks the options from the ClientHello (SNI).</summary>
    public async Task AuthenticateAsServerAsync(ServerOptionsSelectionCallback selectOptions, object? state)
    {
        if (_openSsl is { } session)
        {
            await HandshakeWithOpenSslAsync(session).ConfigureAwait(false);
            return;
        }

        await _ssl!.AuthenticateAsServerAsync(selectOptions, state, CancellationToken.None).ConfigureAwait(false);

        // Messages written after the last flush (TLS 1.3 session tickets) go out before the first response.
        await _stream.SendBufferedAsync().ConfigureAwait(false);
        _stream.CountsPlaintext = _ssl.SslProtocol == SslProtocols.Tls13;
        _info = new TlsConnectionInfo(_ssl);
    }

    public override void Schedule(IThreadPoolWorkItem workItem) => _inner.Schedule(workItem);

    public override void StopReceiving()
    {
        if (Interlocked.Exchange(ref _receiveStopped, 1) == 0)
        {
            _inner.StopReceiving();
        }
    }

    /// <summary>Sends close_notify, then the FIN once the socket took it (at once, normally); receiving goes on.</summary>
    public override void ShutdownSend()
    {
        if (IsClosedLocally || _sendShutDown)
        {
            return;
        }

        _sendShutDown = true;
        if (_info is null || _send.IsPending)
        {
            _inner.ShutdownSend();
            return;
        }

        _closeNotify = CloseNotifyThenShutdownSendAsync();
    }

    private async Task CloseNotifyThenShutdownSendAsync()
    {
        try
        {
            await SendCloseNotifyAsync().ConfigureAwait(false);
        }
        finally
        {
            _inner.ShutdownSend();
        }
    }

    private async Task SendCloseNotifyAsync()
    {
        try
        {
            if (_openSsl is { } session)
            {
                session.Shutdown();
            }
            else
            {
                await _ssl!.ShutdownAsync().ConfigureAwait(false);
            }

            await _stream.SendBufferedAsync().ConfigureAwait(false);
        }
        catch (Exception)
        {
            // Best effort: the peer is gone, or the session failed earlier (SslStream then rethrows that failure, of any
            // type). The FIN or the close that follows tells the peer as much, and closing must go on regardless.
        }
    }

    public override void Abort()
    {
        Volatile.Write(ref _state, Closed);
        if (Interlocked.Exchange(ref _aborted, 1) == 0)
        {
            _inner.Abort();
        }
    }

    public override ValueTask DisposeAsync()
    {
        bool graceful = Interlocked.CompareExchange(ref _state, Closed, Open) == Open;
        if (graceful && _info is not null && !_sendShutDown && !_send.IsPending)
        {
            _sendShutDown = true;
            _closeNotify = SendCloseNotifyAsync();
        }

        return DisposeCoreAsync();
    }

    private async ValueTask DisposeCoreAsync()
    {
        // close_notify has normally left already (one small send). One the socket has not taken yet fails when the inner
        // connection closes, rather than holding the close for a peer that does not read.
        try
        {
            await _inner.DisposeAsync().ConfigureAwait(false);
            if (_closeNotify is not null)
            {
                await _closeNotify.ConfigureAwait(false);
            }

            await _receive.WaitUntilIdleAsync().ConfigureAwait(false);
            await _send.WaitUntilIdleAsync().ConfigureAwait(false);
        }
        finally
        {
            // Synchronously: SslStream's asynchronous disposal flushes the inner stream, which would try to send on a closed connection.
            // The session first: it waits for a call in progress, and no BIO callback touches the stream after it.
            _openSsl?.Dispose();
            _ssl?.Dispose();
            _stream.Dispose();
        }
    }

    /// <summary>The SslStream of a server connection, remembering whether it refused the client's certificate.</summary>
    private sealed class ServerSslStream(Stream inner) : SslStream(inner, leaveInnerStreamOpen: true)
    {
        public bool ClientCertificateRejected { get; set; }
    }

    /// <summary>Marks the handshake of <paramref name="sender"/> as failed on its client certificate (from the validation callback).</summary>
    internal static void OnClientCertificateRejected(object sender)
    {
        if (sender is ServerSslStream ssl)
        {
            ssl.ClientCertificateRejected = true;
        }
    }

    /// <summary>The client certificate as an <see cref="X509Certificate2"/>.</summary>
    internal static X509Certificate2? AsCertificate2(X509Certificate? certificate) => certificate switch
    {
        null => null,
        X509Certificate2 certificate2 => certificate2,
        _ => X509CertificateLoader.LoadCertificate(certificate.GetRawCertData()),
    };
}
