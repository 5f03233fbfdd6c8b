using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;

namespace Falconet.Transport.Tls;

/// <summary>Receives: one SslStream read into the caller's block, after waiting for the peer's records where SslStream would wait inside.</summary>
internal sealed partial class TlsConnection
{
    // Receives: whether the next one may wait for the peer before reading through SslStream (see ReceiveAsync).
    private readonly ReadAfterRecords _readAfterRecords;
    private int _receiveLength;
    private bool _readMayWaitFirst;

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

        if (_openSsl is { } session)
        {
            return ReceiveWithOpenSsl(session, buffer, ct);
        }

        _receiveLength = buffer.Length;
        if (_readMayWaitFirst && _stream.SslStreamNeedsRecords)
        {
            // SslStream would wait for the peer inside this read: wait for the bytes first (into a pool block), then read
            // where they arrived, normally completing at once. A read that waits inside suspends two of SslStream's async
            // methods per receive, and on the thread pool their pooled boxes would be rented on one thread and returned on
            // another.
            // The wait's outcome is read exactly once: here when it completed at once, else by the receive that waits for it.
            // (A second look at IsCompleted could find it completed in between and leave it unread: its reusable source then
            // stayed taken, later waits fell back to pooled boxes, and the connection failed on a stale token.)
            ValueTask<int> wait;
            bool waiting;
            try
            {
                wait = _stream.WaitForRecordsAsync(ct);
                waiting = !wait.IsCompleted;
                if (!waiting)
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

            if (waiting)
            {
                return new ValueTask<int>(_receive, _receive.Begin(_readAfterRecords.Start(wait, buffer, ct)));
            }
        }

        ValueTask<int> read = _ssl!.ReadAsync(buffer, ct);
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

    /// <summary>True while a pending receive waits for the peer's records before it reads through the engine.</summary>
    internal bool ReceiveWaitsForRecords => _openSsl?.WaitingForRecords ?? _readAfterRecords.WaitingForRecords;

    private int CompleteReceive(ValueTask<int> read)
    {
        if (_openSsl is not null)
        {
            return CompleteOpenSslReceive(read);
        }

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
    private sealed class ReadAfterRecords : ReceiveSource
    {
        private readonly TlsConnection _connection;
        private readonly Action _onRecords;
        private readonly Action _onRead;
        private ValueTask<int> _pending;
        private bool _waitingForRecords;
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
            short version = Reset();
            _buffer = buffer;
            _token = ct;
            _pending = wait;
            Volatile.Write(ref _waitingForRecords, true);
            wait.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onRecords);
            return new ValueTask<int>(this, version);
        }

        /// <summary>A failure of the wait, as SslStream would have reported it from its own read.</summary>
        public static Exception AsReadFailure(Exception exception, CancellationToken ct) =>
            exception is IOException || (exception is OperationCanceledException && ct.IsCancellationRequested)
                ? exception
                : new IOException("Unable to read data from the transport connection: " + exception.Message, exception);

        /// <summary>True while a receive waits for the peer's records and SslStream has not been called yet.</summary>
        public bool WaitingForRecords => Volatile.Read(ref _waitingForRecords);

        private void OnRecords()
        {
            Volatile.Write(ref _waitingForRecords, false);
            ValueTask<int> wait = _pending;
            _pending = default;
            ValueTask<int> read;
            try
            {
                wait.GetAwaiter().GetResult();
                read = _connection._ssl!.ReadAsync(_buffer, _token);
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
            Complete(received, error);
        }
    }

    /// <summary>The reusable awaitable of a receive that completes later (one per connection and engine; no Task per call).</summary>
    private abstract class ReceiveSource : IValueTaskSource<int>
    {
        private ManualResetValueTaskSourceCore<int> _core;

        /// <summary>Makes the source ready for a new receive; the version of its awaitable.</summary>
        protected short Reset()
        {
            _core.Reset();
            return _core.Version;
        }

        /// <summary>Completes the receive with <paramref name="received"/> bytes, or with <paramref name="error"/>.</summary>
        protected void Complete(int received, Exception? error)
        {
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
}
