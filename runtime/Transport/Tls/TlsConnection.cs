using System;
using System.Buffers;
using System.IO;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;

namespace Falconet.Transport.Tls;

/// <summary>
/// TLS over another <see cref="TransportConnection"/>, with the same contract: the HTTP layer receives plaintext into its
/// pool blocks and sends a batch of blocks in one call, and never learns that records are encrypted underneath.
/// </summary>
/// <remarks>
/// <para>
/// <see cref="SslStream"/> (the platform's OpenSSL on Linux) does the protocol. A receive is one SslStream read straight
/// into the caller's block. A send encrypts every segment of the batch (records appended to pool blocks by
/// <see cref="TlsTransportStream"/>) and hands all records to the inner connection in one gathered send, splitting only
/// past <see cref="MaxGatheredBytes"/>, so a pipelined batch costs one system call as on a plain connection.
/// </para>
/// <para>
/// The contract's promises hold: <see cref="StopReceiving"/> stops the inner receive, so a pending read wakes with 0;
/// <see cref="ShutdownSend"/> and a graceful <see cref="DisposeAsync"/> send close_notify before the FIN;
/// <see cref="DisposeAsync"/> completes only once no receive or send is pending and their continuations have run.
/// </para>
/// </remarks>
internal sealed class TlsConnection : TransportConnection, IValueTaskSource<int>
{
    /// <summary>
    /// The most record bytes gathered into one send: eight blocks, since a gathered send of more than eight segments
    /// allocates inside System.Net.Sockets on Linux (docs/runtime-io.md).
    /// </summary>
    internal const int MaxGatheredBytes = 8 * SlabMemoryPool.BlockSize;

    /// <summary>Plaintext per staged record: two records and their overhead fill one gathered send exactly.</summary>
    internal const int RecordPayload = (MaxGatheredBytes / 2) - RecordOverhead;

    /// <summary>More than what TLS adds to a record (header, explicit nonce or content type, tag: 29 bytes at most for AEAD suites).</summary>
    private const int RecordOverhead = 64;

    private const int Open = 0;
    private const int Closed = 1;

    private readonly TransportConnection _inner;
    private readonly TlsTransportStream _stream;
    private readonly ServerSslStream _ssl;
    private readonly TlsOperation _receive;
    private readonly TlsOperation _send;
    private int _state;
    private int _aborted;
    private int _receiveStopped;
    private bool _sendShutDown;
    private Task? _closeNotify;

    // Receives: whether the next one may wait for the peer before reading through SslStream (see ReceiveAsync).
    private readonly ReadAfterRecords _readAfterRecords;
    private int _receiveLength;
    private bool _readMayWaitFirst;
    private readonly bool _waitForRecordsFirst;

    // The batch being encrypted and sent (one at a time, under _send): see EncryptAndSendAsync.
    private readonly Action _onBatchStepCompleted;
    private ManualResetValueTaskSourceCore<int> _batchCore;
    private ReadOnlySequence<byte> _batch;
    private SequencePosition _batchPosition;
    private bool _batchSingle;
    private ReadOnlyMemory<byte> _batchRest;
    private ReadOnlyMemory<byte> _batchRecord;
    private CancellationToken _batchToken;
    private BatchStep _batchStep;
    private ValueTask _batchPending;
    private byte[]? _staging;
    private int _staged;

    /// <param name="inner">The connection TLS runs over.</param>
    /// <param name="waitForRecordsFirst">
    /// Wait for the peer's records before calling SslStream's read when it would wait inside (see
    /// <see cref="TlsTransportStream.SslStreamNeedsRecords"/>); for inner connections that complete on thread-pool threads
    /// (libuv with <see cref="IoScheduling.ThreadPool"/>), where SslStream's own pooled boxes would be rented on one thread
    /// and returned on another.
    /// </param>
    public TlsConnection(TransportConnection inner, bool waitForRecordsFirst = false)
    {
        _inner = inner;
        _stream = new TlsTransportStream(inner);
        _ssl = new ServerSslStream(_stream);
        _receive = new TlsOperation(CompleteReceive);
        _send = new TlsOperation(CompleteSend);
        _onBatchStepCompleted = OnBatchStepCompleted;
        _readAfterRecords = new ReadAfterRecords(this);
        _waitForRecordsFirst = waitForRecordsFirst;
        _stream.TracksRecords = waitForRecordsFirst;
    }

    /// <summary>The connection TLS runs over.</summary>
    public TransportConnection Inner => _inner;

    /// <summary>The record stream under SslStream (what the peer sent first, whether it ended).</summary>
    internal TlsTransportStream RecordStream => _stream;

    /// <summary>The negotiated parameters; null until the handshake completed.</summary>
    public TlsConnectionInfo? Info { get; private set; }

    /// <summary>True when the client certificate was missing or refused during the handshake.</summary>
    internal bool ClientCertificateRejected => _ssl.ClientCertificateRejected;

    public override EndPoint? LocalEndPoint => _inner.LocalEndPoint;

    public override EndPoint? RemoteEndPoint => _inner.RemoteEndPoint;

    public override SlabMemoryPool Pool => _inner.Pool;

    private bool IsClosedLocally => Volatile.Read(ref _state) != Open;

    /// <summary>Runs the server side of the handshake; <paramref name="selectOptions"/> picks the options from the ClientHello (SNI).</summary>
    public async Task AuthenticateAsServerAsync(ServerOptionsSelectionCallback selectOptions, object? state)
    {
        await _ssl.AuthenticateAsServerAsync(selectOptions, state, CancellationToken.None).ConfigureAwait(false);

        // Messages written after the last flush (TLS 1.3 session tickets) go out before the first response.
        await _stream.SendBufferedAsync(CancellationToken.None).ConfigureAwait(false);
        _stream.CountsPlaintext = _ssl.SslProtocol == SslProtocols.Tls13;
        Info = new TlsConnectionInfo(_ssl);
    }

    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled<int>(ct);
        }

        if (_receive.IsPending)
        {
            // Checked before SslStream sees the call, which would refuse it with its own NotSupportedException.
            throw new InvalidOperationException("A receive is already pending on this connection.");
        }

        if (IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0)
        {
            return new ValueTask<int>(0);
        }

        _receiveLength = buffer.Length;
        if (_waitForRecordsFirst && _readMayWaitFirst && _stream.SslStreamNeedsRecords)
        {
            // SslStream would wait for the peer inside this read, and its pooled boxes would be rented here and returned
            // on the thread the bytes arrive on: wait for them first, then read there (normally completing at once).
            ValueTask<int> wait;
            try
            {
                wait = _stream.WaitForRecordsAsync(ct);
                if (wait.IsCompleted)
                {
                    wait.GetAwaiter().GetResult();
                }
            }
            catch (Exception exception)
            {
                try
                {
                    return new ValueTask<int>(CompleteReceive(ValueTask.FromException<int>(ReadAfterRecords.AsReadFailure(exception, ct))));
                }
                catch (Exception mapped)
                {
                    return ValueTask.FromException<int>(mapped);
                }
            }

            if (!wait.IsCompleted)
            {
                return new ValueTask<int>(_receive, _receive.Begin(_readAfterRecords.Start(wait, buffer, ct)));
            }
        }

        ValueTask<int> read = _ssl.ReadAsync(buffer, ct);
        if (!read.IsCompleted)
        {
            return new ValueTask<int>(_receive, _receive.Begin(read));
        }

        try
        {
            return new ValueTask<int>(CompleteReceive(read));
        }
        catch (Exception exception)
        {
            return ValueTask.FromException<int>(exception);
        }
    }

    private int CompleteReceive(ValueTask<int> read)
    {
        _readMayWaitFirst = false;
        int received;
        try
        {
            received = read.GetAwaiter().GetResult();
        }
        catch (Exception) when (IsClosedLocally || Volatile.Read(ref _receiveStopped) != 0)
        {
            // Stopped or closed here: the read ends as the contract says, with 0, even when a record was cut short.
            return 0;
        }

        // Less than asked for: SslStream has no decrypted bytes left (it copies until the buffer is full).
        _stream.Returned(received);
        _readMayWaitFirst = received > 0 && received < _receiveLength;
        return received;
    }

    /// <summary>
    /// A receive that waits for the peer's bytes before it reads through SslStream: one per connection, reused, its
    /// continuations run where the bytes arrive (see <see cref="TlsTransportStream.SslStreamNeedsRecords"/>).
    /// </summary>
    private sealed class ReadAfterRecords : IValueTaskSource<int>
    {
        private readonly TlsConnection _connection;
        private readonly Action _onRecords;
        private readonly Action _onRead;
        private ManualResetValueTaskSourceCore<int> _core;
        private ValueTask<int> _pending;
        private Memory<byte> _buffer;
        private CancellationToken _token;

        public ReadAfterRecords(TlsConnection connection)
        {
            _connection = connection;
            _onRecords = OnRecords;
            _onRead = OnRead;
        }

        public ValueTask<int> Start(ValueTask<int> wait, Memory<byte> buffer, CancellationToken ct)
        {
            _core.Reset();
            _buffer = buffer;
            _token = ct;
            _pending = wait;
            short version = _core.Version;
            wait.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onRecords);
            return new ValueTask<int>(this, version);
        }

        /// <summary>A failure of the wait, as SslStream would have reported it from its own read.</summary>
        public static Exception AsReadFailure(Exception exception, CancellationToken ct) =>
            exception is IOException || (exception is OperationCanceledException && ct.IsCancellationRequested)
                ? exception
                : new IOException("Unable to read data from the transport connection: " + exception.Message, exception);

        private void OnRecords()
        {
            ValueTask<int> wait = _pending;
            _pending = default;
            ValueTask<int> read;
            try
            {
                wait.GetAwaiter().GetResult();
                read = _connection._ssl.ReadAsync(_buffer, _token);
            }
            catch (Exception exception)
            {
                Finish(0, AsReadFailure(exception, _token));
                return;
            }

            if (read.IsCompleted)
            {
                Complete(read);
                return;
            }

            _pending = read;
            read.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onRead);
        }

        private void OnRead()
        {
            ValueTask<int> read = _pending;
            _pending = default;
            Complete(read);
        }

        private void Complete(ValueTask<int> read)
        {
            int received;
            try
            {
                received = read.GetAwaiter().GetResult();
            }
            catch (Exception exception)
            {
                Finish(0, exception);
                return;
            }

            Finish(received, null);
        }

        private void Finish(int received, Exception? error)
        {
            _buffer = default;
            _token = default;
            if (error is null)
            {
                _core.SetResult(received);
            }
            else
            {
                _core.SetException(error);
            }
        }

        int IValueTaskSource<int>.GetResult(short token) => _core.GetResult(token);

        ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _core.GetStatus(token);

        void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
            _core.OnCompleted(continuation, state, token, flags);
    }

    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        if (ct.IsCancellationRequested)
        {
            return ValueTask.FromCanceled(ct);
        }

        if (IsClosedLocally)
        {
            return ValueTask.FromException(new ConnectionAbortedException("The connection was aborted or disposed."));
        }

        if (buffers.IsEmpty)
        {
            return default;
        }

        if (_send.IsPending)
        {
            throw new InvalidOperationException("A send is already pending on this connection.");
        }

        ValueTask<int> send = EncryptAndSendAsync(buffers, ct);
        if (!send.IsCompleted)
        {
            return new ValueTask(_send, _send.Begin(send));
        }

        try
        {
            CompleteSend(send);
            return default;
        }
        catch (Exception exception)
        {
            return ValueTask.FromException(exception);
        }
    }

    /// <summary>
    /// Encrypts the batch and sends the records gathered; completes synchronously when the socket took them at once.
    /// A batch of several blocks is staged into full-size records (<see cref="RecordPayload"/>) rather than one record
    /// per 4 KiB block: a copy plain connections do not make, measured cheaper than four times the records.
    /// </summary>
    /// <remarks>
    /// Driven by continuations through one reusable awaitable (<see cref="_batchCore"/>) rather than a pooled async
    /// method: with <see cref="IoScheduling.ThreadPool"/> the send completes on another thread than the call, and a
    /// pooled box returned on another thread than the one that rented it misses the per-thread cache and is allocated.
    /// </remarks>
    private ValueTask<int> EncryptAndSendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct)
    {
        _batch = buffers;
        _batchPosition = buffers.Start;
        _batchSingle = buffers.IsSingleSegment;
        _batchRest = default;
        _batchToken = ct;
        _batchStep = BatchStep.NextRecord;
        _batchCore.Reset();
        short version = _batchCore.Version;
        _stream.BeginGather();
        bool done;
        try
        {
            done = AdvanceBatch();
        }
        catch (Exception exception)
        {
            EndBatch();
            return ValueTask.FromException<int>(exception);
        }

        if (done)
        {
            EndBatch();
            return new ValueTask<int>(0);
        }

        return new ValueTask<int>(this, version);
    }

    /// <summary>Runs the batch on until it is sent (true) or a step is pending (false: its continuation goes on).</summary>
    private bool AdvanceBatch()
    {
        while (true)
        {
            switch (_batchStep)
            {
                case BatchStep.NextRecord:
                    if (!TakeRecord())
                    {
                        _batchStep = BatchStep.Done;
                        if (AwaitBatchStep(_stream.SendGatheredAsync(_batchToken)))
                        {
                            return false;
                        }

                        break;
                    }

                    // Sends first what would pass MaxGatheredBytes with this record.
                    _batchStep = BatchStep.Write;
                    long gathered = _stream.Buffered;
                    if (gathered != 0 && gathered + _batchRecord.Length + RecordOverhead > MaxGatheredBytes &&
                        AwaitBatchStep(_stream.SendGatheredAsync(_batchToken)))
                    {
                        return false;
                    }

                    break;

                case BatchStep.Write:
                    // Completes synchronously: the records only go into blocks.
                    _batchStep = BatchStep.NextRecord;
                    if (AwaitBatchStep(_ssl.WriteAsync(_batchRecord, _batchToken)))
                    {
                        return false;
                    }

                    break;

                default:
                    return true;
            }
        }
    }

    /// <summary>True when <paramref name="step"/> is pending (the batch goes on in its continuation); throws its failure.</summary>
    private bool AwaitBatchStep(ValueTask step)
    {
        if (step.IsCompleted)
        {
            step.GetAwaiter().GetResult();
            return false;
        }

        _batchPending = step;
        step.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onBatchStepCompleted);
        return true;
    }

    private void OnBatchStepCompleted()
    {
        ValueTask step = _batchPending;
        _batchPending = default;
        bool done;
        try
        {
            step.GetAwaiter().GetResult();
            done = AdvanceBatch();
        }
        catch (Exception exception)
        {
            EndBatch();
            _batchCore.SetException(exception);
            return;
        }

        if (done)
        {
            EndBatch();
            _batchCore.SetResult(0);
        }
    }

    /// <summary>
    /// The next record's plaintext into <see cref="_batchRecord"/>: a single-segment batch as it is, a larger one staged
    /// into records of <see cref="RecordPayload"/> bytes; false when the batch is all written.
    /// </summary>
    private bool TakeRecord()
    {
        if (_batchSingle)
        {
            ReadOnlyMemory<byte> first = _batch.First;
            _batch = default;
            _batchRecord = first;
            return !first.IsEmpty;
        }

        _staging ??= ArrayPool<byte>.Shared.Rent(RecordPayload);
        while (true)
        {
            if (_batchRest.IsEmpty)
            {
                if (_batch.IsEmpty || !_batch.TryGet(ref _batchPosition, out _batchRest))
                {
                    _batch = default;
                    _batchRecord = _staging.AsMemory(0, _staged);
                    _staged = 0;
                    return !_batchRecord.IsEmpty;
                }

                continue;
            }

            int take = Math.Min(_batchRest.Length, RecordPayload - _staged);
            _batchRest.Span[..take].CopyTo(_staging.AsSpan(_staged));
            _staged += take;
            _batchRest = _batchRest[take..];
            if (_staged == RecordPayload)
            {
                _batchRecord = _staging.AsMemory(0, _staged);
                _staged = 0;
                return true;
            }
        }
    }

    /// <summary>Ends the gathering and forgets the batch (its blocks belong to the caller again).</summary>
    private void EndBatch()
    {
        _stream.EndGather();
        _batch = default;
        _batchPosition = default;
        _batchRest = default;
        _batchRecord = default;
        _batchToken = default;
        _staged = 0;
        if (_staging is { } staging)
        {
            _staging = null;
            ArrayPool<byte>.Shared.Return(staging);
        }
    }

    int IValueTaskSource<int>.GetResult(short token) => _batchCore.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _batchCore.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags) =>
        _batchCore.OnCompleted(continuation, state, token, flags);

    /// <summary>Where a pending batch goes on.</summary>
    private enum BatchStep
    {
        NextRecord,
        Write,
        Done,
    }

    private int CompleteSend(ValueTask<int> send)
    {
        try
        {
            return send.GetAwaiter().GetResult();
        }
        catch (Exception exception) when (exception is not ConnectionAbortedException && IsClosedLocally)
        {
            throw new ConnectionAbortedException("The connection was aborted or disposed during a send.", exception);
        }
        catch (Exception exception) when (exception is not (IOException or OperationCanceledException))
        {
            throw new IOException("The TLS send failed: " + exception.Message, exception);
        }
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
        if (Info is null || _send.IsPending)
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
            await _ssl.ShutdownAsync().ConfigureAwait(false);
            await _stream.SendBufferedAsync(CancellationToken.None).ConfigureAwait(false);
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
        if (graceful && Info is not null && !_sendShutDown && !_send.IsPending)
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
            _ssl.Dispose();
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
