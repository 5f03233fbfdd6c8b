using System;
using System.Buffers;
using System.Collections.Generic;
using System.IO;
using System.Net;
using System.Threading;
using System.Threading.Tasks;
using System.Threading.Tasks.Sources;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Fuzz;

/// <summary>
/// A connection between the server and an in-process client (<see cref="Client"/>, a <see cref="Stream"/>): what the client
/// writes reaches the server's receives cut into pieces by a <see cref="WirePlan"/>, which may also corrupt it once; what
/// the server sends is what the client reads.
/// </summary>
/// <remarks>
/// Once the bytes were corrupted, when both sides wait for the other with nothing in flight (a corrupted length makes the
/// server wait for bytes the client never sends, while the client waits for an answer), the wire ends as if the client
/// had closed: a real peer's silence is ended by a timeout, which is not what is fuzzed here. The verdict waits for a
/// quiet period, so a side that is busy between a receive and its answer is not mistaken for one that waits. Without
/// corruption nothing ends the wire early: a wait there is a hang, which the target's bound reports.
/// </remarks>
public sealed class DuplexConnection : TransportConnection, IValueTaskSource<int>
{
    private static readonly IPEndPoint s_endPoint = new(IPAddress.Loopback, 0);
    private static readonly TimeSpan s_quietPeriod = TimeSpan.FromMilliseconds(20);

    private readonly Lock _gate = new();
    private readonly SlabMemoryPool _pool;
    private readonly WirePlan _plan;
    private readonly List<byte> _written = [];
    private readonly List<byte> _wire = [];
    private readonly ArrayBufferWriter<byte> _sent = new();
    private ManualResetValueTaskSourceCore<int> _receive = new() { RunContinuationsAsynchronously = true };
    private Memory<byte> _receiveBuffer;
    private bool _receivePending;
    private int _delivered;
    private int _piece;
    private bool _wireEnded;
    private int _clientRead;
    private TaskCompletionSource<int>? _clientWait;
    private Memory<byte> _clientBuffer;
    private bool _receivingStopped;
    private int _recordStart;
    private int _recordEnd = -1;
    private long _version;

    internal DuplexConnection(SlabMemoryPool pool, WirePlan plan)
    {
        _pool = pool;
        _plan = plan;
        Client = new ClientStream(this);
    }

    /// <summary>The client's end: writes go to the server through the plan, reads return what the server sent.</summary>
    public Stream Client { get; }

    /// <summary>The bytes the client wrote so far, before any corruption (the offsets of <see cref="WirePlan"/>).</summary>
    public int ClientBytesWritten
    {
        get
        {
            lock (_gate)
            {
                return _written.Count;
            }
        }
    }

    /// <summary>
    /// The first offset of the client's bytes whose delivery the corruption changed (for a duplicated record, the end of the
    /// record the copy follows); null while nothing was corrupted.
    /// </summary>
    public int? CorruptedAt { get; private set; }

    /// <summary>True once the server shut down its sending side (FIN) or closed.</summary>
    public bool SendShutDown { get; private set; }

    /// <summary>True when the server tried to send after shutting down its sending side or after closing.</summary>
    public bool SentAfterClose { get; private set; }

    /// <summary>True once the server disposed the connection.</summary>
    public bool Disposed { get; private set; }

    /// <summary>Every byte the server sent, in order.</summary>
    public ReadOnlyMemory<byte> Sent
    {
        get
        {
            lock (_gate)
            {
                return _sent.WrittenMemory.ToArray();
            }
        }
    }

    /// <inheritdoc/>
    public override EndPoint? LocalEndPoint => s_endPoint;

    /// <inheritdoc/>
    public override EndPoint? RemoteEndPoint => s_endPoint;

    /// <inheritdoc/>
    public override SlabMemoryPool Pool => _pool;

    /// <inheritdoc/>
    public override ValueTask<int> ReceiveAsync(Memory<byte> buffer, CancellationToken ct = default)
    {
        lock (_gate)
        {
            if (_receivePending)
            {
                throw new InvalidOperationException("A receive is already pending.");
            }

            int count = TakeLocked(buffer);
            if (count >= 0)
            {
                return new ValueTask<int>(count);
            }

            _receive.Reset();
            _receiveBuffer = buffer;
            _receivePending = true;
            ChangedLocked();
            return new ValueTask<int>(this, _receive.Version);
        }
    }

    /// <inheritdoc/>
    public override ValueTask SendAsync(ReadOnlySequence<byte> buffers, CancellationToken ct = default)
    {
        lock (_gate)
        {
            if (SendShutDown || Disposed)
            {
                SentAfterClose = true;
                return ValueTask.FromException(new ConnectionAbortedException("The connection was closed before this send."));
            }

            foreach (ReadOnlyMemory<byte> segment in buffers)
            {
                _sent.Write(segment.Span);
            }

            WakeClientLocked();
            ChangedLocked();
        }

        return default;
    }

    /// <inheritdoc/>
    public override void Schedule(IThreadPoolWorkItem workItem) => workItem.Execute();

    /// <inheritdoc/>
    public override void StopReceiving()
    {
        lock (_gate)
        {
            _receivingStopped = true;
            CompleteReceiveLocked();
        }
    }

    /// <inheritdoc/>
    public override void ShutdownSend()
    {
        lock (_gate)
        {
            SendShutDown = true;
            WakeClientLocked();
        }
    }

    /// <inheritdoc/>
    public override void Abort() => ShutdownSend();

    /// <inheritdoc/>
    public override ValueTask DisposeAsync()
    {
        lock (_gate)
        {
            Disposed = true;
            _receivingStopped = true;
            CompleteReceiveLocked();
            WakeClientLocked();
        }

        return default;
    }

    int IValueTaskSource<int>.GetResult(short token) => _receive.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _receive.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _receive.OnCompleted(continuation, state, token, flags);

    /// <summary>The client wrote <paramref name="bytes"/>: the plan corrupts them (once) on their way to the server.</summary>
    private void ClientWrite(ReadOnlySpan<byte> bytes)
    {
        lock (_gate)
        {
            foreach (byte value in bytes)
            {
                int offset = _written.Count;
                _written.Add(value);
                if (_wireEnded)
                {
                    continue;
                }

                bool at = offset == _plan.Offset;
                switch (_plan.Corruption)
                {
                    case WireCorruption.Truncate when at:
                        CorruptedAt = offset;
                        _wireEnded = true;
                        continue;
                    case WireCorruption.FlipBit when at:
                        CorruptedAt = offset;
                        _wire.Add((byte)(value ^ (1 << (_plan.Detail & 7))));
                        continue;
                    case WireCorruption.InsertGarbage when at:
                        CorruptedAt = offset;
                        _wire.AddRange(WirePlan.Garbage(_plan.Detail));
                        break;
                }

                _wire.Add(value);
                TrackRecordLocked(offset);
            }

            CompleteReceiveLocked();
            ChangedLocked();
        }
    }

    /// <summary>Follows the client's record framing, to copy the record that holds the plan's offset right after itself.</summary>
    private void TrackRecordLocked(int offset)
    {
        if (offset == _recordStart + 4)
        {
            _recordEnd = _recordStart + 5 + ((_written[_recordStart + 3] << 8) | _written[_recordStart + 4]);
        }

        if (offset + 1 != _recordEnd)
        {
            return;
        }

        if (_plan.Corruption == WireCorruption.DuplicateRecord && _plan.Offset >= _recordStart && _plan.Offset < _recordEnd)
        {
            CorruptedAt = _recordEnd;
            _wire.AddRange(_written.GetRange(_recordStart, _recordEnd - _recordStart));
        }

        _recordStart = _recordEnd;
        _recordEnd = -1;
    }

    private void ClientClose()
    {
        lock (_gate)
        {
            // Garbage at the offset just past the client's last byte is appended before the end.
            if (_plan.Corruption == WireCorruption.InsertGarbage && _plan.Offset == _written.Count && !_wireEnded)
            {
                CorruptedAt = _written.Count;
                _wire.AddRange(WirePlan.Garbage(_plan.Detail));
            }

            _wireEnded = true;
            CompleteReceiveLocked();
        }
    }

    private ValueTask<int> ClientReadAsync(Memory<byte> buffer)
    {
        lock (_gate)
        {
            int count = ReadSentLocked(buffer);
            if (count >= 0)
            {
                return new ValueTask<int>(count);
            }

            _clientBuffer = buffer;
            _clientWait = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            ChangedLocked();
            return new ValueTask<int>(_clientWait.Task);
        }
    }

    /// <summary>The next piece for a receive (what the plan cuts, of what is there), 0 at the end, -1 to wait.</summary>
    private int TakeLocked(Memory<byte> buffer)
    {
        int available = _wire.Count - _delivered;
        if (available == 0 || _receivingStopped)
        {
            return _wireEnded || _receivingStopped ? 0 : -1;
        }

        int piece = _plan.PieceSize(_piece++);
        int count = Math.Min(Math.Min(available, piece == 0 ? available : piece), buffer.Length);
        for (int i = 0; i < count; i++)
        {
            buffer.Span[i] = _wire[_delivered + i];
        }

        _delivered += count;
        return count;
    }

    private int ReadSentLocked(Memory<byte> buffer)
    {
        int available = _sent.WrittenCount - _clientRead;
        if (available == 0)
        {
            return SendShutDown || Disposed ? 0 : -1;
        }

        int count = Math.Min(available, buffer.Length);
        _sent.WrittenSpan.Slice(_clientRead, count).CopyTo(buffer.Span);
        _clientRead += count;
        return count;
    }

    private void CompleteReceiveLocked()
    {
        if (!_receivePending)
        {
            return;
        }

        int count = TakeLocked(_receiveBuffer);
        if (count >= 0)
        {
            _receivePending = false;
            _receiveBuffer = default;
            _receive.SetResult(count);
        }
    }

    private void WakeClientLocked()
    {
        if (_clientWait is null)
        {
            return;
        }

        int count = ReadSentLocked(_clientBuffer);
        if (count >= 0)
        {
            TaskCompletionSource<int> wait = _clientWait;
            _clientWait = null;
            _clientBuffer = default;
            wait.SetResult(count);
        }
    }

    /// <summary>Something moved; when both sides now wait with nothing in flight, ends the wire after a quiet period.</summary>
    private void ChangedLocked()
    {
        long version = ++_version;
        if (IsStalledLocked())
        {
            _ = EndIfStillStalledAsync(version);
        }
    }

    private bool IsStalledLocked()
        => CorruptedAt is not null && _receivePending && _clientWait is not null && !_wireEnded && _delivered == _wire.Count
            && _clientRead == _sent.WrittenCount;

    private async Task EndIfStillStalledAsync(long version)
    {
        await Task.Delay(s_quietPeriod).ConfigureAwait(false);
        lock (_gate)
        {
            if (_version == version && IsStalledLocked())
            {
                _wireEnded = true;
                CompleteReceiveLocked();
            }
        }
    }

    /// <summary>The client's end of the connection, for an <see cref="System.Net.Security.SslStream"/> client.</summary>
    private sealed class ClientStream(DuplexConnection connection) : Stream
    {
        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position
        {
            get => throw new NotSupportedException();
            set => throw new NotSupportedException();
        }

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
            => connection.ClientReadAsync(buffer);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
            => connection.ClientReadAsync(buffer.AsMemory(offset, count)).AsTask();

        public override int Read(byte[] buffer, int offset, int count)
            => connection.ClientReadAsync(buffer.AsMemory(offset, count)).AsTask().GetAwaiter().GetResult();

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            connection.ClientWrite(buffer.Span);
            return default;
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
        {
            connection.ClientWrite(buffer.AsSpan(offset, count));
            return Task.CompletedTask;
        }

        public override void Write(byte[] buffer, int offset, int count) => connection.ClientWrite(buffer.AsSpan(offset, count));

        public override void Flush()
        {
        }

        public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                connection.ClientClose();
            }

            base.Dispose(disposing);
        }
    }
}
