using System;
using System.Buffers;
using System.Buffers.Binary;
using System.Collections.Generic;
using System.Diagnostics;
using System.Threading;
using System.Threading.Tasks;
using Falconet.Buffers;
using Falconet.Transport;

namespace Falconet.Http.Http2;

/// <summary>
/// The frames a connection sends: written into pool blocks under the connection's lock by the read loop and by the
/// streams' handlers, and sent with one gathered call at a time. The connection-level send window, the peer's frame size
/// and the streams waiting for window or output room live here too.
/// </summary>
/// <remarks>
/// <para>
/// Batching: a flush asked for on the read loop's thread while it processes what it received (a handler that completed
/// there, a PING's answer) waits for the loop's send at the end of the batch, so every response of a read batch leaves in
/// one send, as on HTTP/1.1. A flush from anywhere else sends at once.
/// </para>
/// <para>
/// Sending: one send at a time. Frames written while a send is in flight go after the bytes it carries (appends never
/// touch bytes already written), and the completion of the send starts the next one. At or above the write-behind bound
/// (<see cref="IsOverLimit"/>) streams stop turning their bodies into DATA frames and the read loop stops reading, until a
/// send completes.
/// </para>
/// </remarks>
internal sealed class Http2Output
{
    private readonly TransportConnection _transport;
    private readonly BlockChain _chain;
    private readonly long _limit;
    private readonly DataRateMonitor _rates;
    private readonly Action _onSendCompleted;
    private readonly List<Http2Stream> _blocked = new();
    private readonly Http2Signal _drained = new();
    private readonly Http2Signal _sent = new();
    private ValueTask _pendingSend;
    private SequencePosition _inFlightEnd;
    private bool _sending;
    private bool _closed;
    private bool _disposed;
    private Exception? _failure;
    private int _batchThread;

    public Http2Output(TransportConnection transport, long limit, DataRateMonitor rates)
    {
        _transport = transport;
        _chain = new BlockChain(transport.Pool);
        _limit = limit;
        _rates = rates;
        _onSendCompleted = OnSendCompleted;
    }

    /// <summary>The connection's lock: every frame, window and stream-state change happens under it.</summary>
    public Lock Gate { get; } = new();

    /// <summary>What the peer lets the server send on the connection before its next WINDOW_UPDATE (RFC 9113 section 6.9).</summary>
    public long ConnectionWindow { get; set; } = 65_535;

    /// <summary>The peer's SETTINGS_MAX_FRAME_SIZE: the largest payload the server may send in one frame.</summary>
    public int PeerMaxFrameSize { get; set; } = Http2FrameHeader.DefaultMaxFrameSize;

    /// <summary>Bytes written and not yet sent.</summary>
    public long Buffered => _chain.Length;

    /// <summary>The most bytes buffered at once (write-behind diagnostics).</summary>
    public long PeakBuffered { get; private set; }

    /// <summary>At or above the write-behind bound: no DATA is added, and the read loop waits before it reads on.</summary>
    public bool IsOverLimit => _chain.Length >= _limit;

    /// <summary>True once the connection stopped sending (closed, aborted, or a send failed).</summary>
    public bool IsClosed => _closed;

    /// <summary>The chain frames are written into (under <see cref="Gate"/>).</summary>
    public BlockChain Chain => _chain;

    /// <summary>The read loop starts processing a batch on this thread: flushes asked for here wait for its send.</summary>
    public void BeginBatch() => Volatile.Write(ref _batchThread, Environment.CurrentManagedThreadId);

    /// <summary>True on the read loop's thread while it processes a batch.</summary>
    public bool IsBatchThread => Volatile.Read(ref _batchThread) == Environment.CurrentManagedThreadId;

    /// <summary>The read loop finished the batch; it sends next.</summary>
    public void EndBatch() => Volatile.Write(ref _batchThread, 0);

    /// <summary>Writes a frame header; its payload follows with a WritePayload call.</summary>
    public void WriteFrameHeader(int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread);
        Span<byte> header = _chain.GetWritableMemory(Http2FrameHeader.Size).Span;
        Http2FrameHeader.Write(header, length, type, flags, streamId);
        _chain.Advance(Http2FrameHeader.Size);
    }

    public void WritePayload(ReadOnlySpan<byte> payload)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread);
        _chain.Write(payload);
    }

    /// <summary>Moves <paramref name="count"/> bytes from the head of <paramref name="source"/> into the output (a DATA payload).</summary>
    public void WritePayload(BlockChain source, int count)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread);
        ReadOnlySequence<byte> data = source.GetSequence().Slice(0, count);
        foreach (ReadOnlyMemory<byte> segment in data)
        {
            _chain.Write(segment.Span);
        }

        source.Consume(data.End);
    }

    /// <summary>A frame whose payload is one 32-bit value (RST_STREAM's error code, WINDOW_UPDATE's increment).</summary>
    public void WriteUInt32Frame(Http2FrameType type, int streamId, uint value)
    {
        WriteFrameHeader(4, type, Http2FrameFlags.None, streamId);
        Span<byte> payload = stackalloc byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(payload, value);
        _chain.Write(payload);
    }

    public void WriteRstStream(int streamId, Http2ErrorCode code) => WriteUInt32Frame(Http2FrameType.RstStream, streamId, (uint)code);

    public void WriteWindowUpdate(int streamId, int increment) => WriteUInt32Frame(Http2FrameType.WindowUpdate, streamId, (uint)increment);

    public void WriteGoAway(int lastStreamId, Http2ErrorCode code)
    {
        WriteFrameHeader(8, Http2FrameType.GoAway, Http2FrameFlags.None, 0);
        Span<byte> payload = stackalloc byte[8];
        BinaryPrimitives.WriteUInt32BigEndian(payload, (uint)lastStreamId & 0x7FFF_FFFF);
        BinaryPrimitives.WriteUInt32BigEndian(payload.Slice(4), (uint)code);
        _chain.Write(payload);
    }

    public void WritePing(Http2FrameFlags flags, ReadOnlySpan<byte> opaqueData)
    {
        WriteFrameHeader(8, Http2FrameType.Ping, flags, 0);
        _chain.Write(opaqueData);
    }

    /// <summary>
    /// Writes a header block as a HEADERS frame and as many CONTINUATION frames as the peer's frame size needs (RFC 9113
    /// section 4.3: nothing may come between them, which the lock guarantees).
    /// </summary>
    public void WriteHeaderBlock(int streamId, ReadOnlySpan<byte> block, bool endStream)
    {
        int maxFrame = PeerMaxFrameSize;
        Http2FrameType type = Http2FrameType.Headers;
        Http2FrameFlags flags = endStream ? Http2FrameFlags.EndStream : Http2FrameFlags.None;
        do
        {
            int length = Math.Min(block.Length, maxFrame);
            bool last = length == block.Length;
            WriteFrameHeader(length, type, last ? flags | Http2FrameFlags.EndHeaders : flags, streamId);
            _chain.Write(block.Slice(0, length));
            block = block.Slice(length);
            type = Http2FrameType.Continuation;
            flags = Http2FrameFlags.None;
        }
        while (!block.IsEmpty);
    }

    /// <summary>Remembers the peak after a write (under <see cref="Gate"/>).</summary>
    public void TrackPeak()
    {
        if (_chain.Length > PeakBuffered)
        {
            PeakBuffered = _chain.Length;
        }
    }

    /// <summary>A stream could not send for lack of window or output room: woken by the next WINDOW_UPDATE or completed send.</summary>
    public void AddBlocked(Http2Stream stream)
    {
        Debug.Assert(Gate.IsHeldByCurrentThread);
        if (!_blocked.Contains(stream))
        {
            _blocked.Add(stream);
        }
    }

    public void RemoveBlocked(Http2Stream stream) => _blocked.Remove(stream);

    /// <summary>Wakes every stream waiting to send (the connection window grew, a send completed, the connection closes).</summary>
    public void WakeBlocked()
    {
        Debug.Assert(Gate.IsHeldByCurrentThread);
        for (int i = _blocked.Count - 1; i >= 0; i--)
        {
            _blocked[i].WakeSender();
        }

        _blocked.Clear();
    }

    /// <summary>
    /// Sends what is buffered, unless a send is already in flight (its completion sends the rest) or the read loop's batch
    /// on this thread will send it. Takes the lock.
    /// </summary>
    public void Flush()
    {
        if (IsBatchThread)
        {
            return;
        }

        SendNow();
    }

    /// <summary>Sends what is buffered now (the read loop at the end of a batch). Takes the lock.</summary>
    public void SendNow()
    {
        ReadOnlySequence<byte> data;
        lock (Gate)
        {
            if (_sending || _closed || _chain.Length == 0)
            {
                return;
            }

            _sending = true;
            data = _chain.GetSequence();
            _inFlightEnd = data.End;
        }

        Send(data);
    }

    /// <summary>The read loop waits here while the output is at or above the bound (a peer that does not read).</summary>
    public ValueTask WaitUntilDrainedAsync()
    {
        lock (Gate)
        {
            if (!IsOverLimit || _closed)
            {
                return default;
            }

            return _drained.Arm();
        }
    }

    /// <summary>
    /// Completes once no send is in flight (at once when none is), closed or not: a send another thread started (a stopping
    /// server's GOAWAY) may still be inside the transport when the connection ends, and the transport must not be disposed
    /// under it. Bounded like any send: the minimum response data rate, or the transport's abort, ends one that stalls.
    /// </summary>
    public ValueTask WaitUntilSentAsync()
    {
        lock (Gate)
        {
            return _sending ? _sent.Arm() : default;
        }
    }

    /// <summary>No more frames will be sent: wakes every waiter with a failure. What is buffered and not in flight is dropped at disposal.</summary>
    public void Close(Exception reason)
    {
        lock (Gate)
        {
            if (_closed)
            {
                return;
            }

            _closed = true;
            _failure ??= reason;
            _drained.Fail(reason);
            WakeBlocked();
        }
    }

    /// <summary>The error a closed output gives its writers.</summary>
    public Exception Failure => _failure ?? new ConnectionAbortedException("The HTTP/2 connection is closed.");

    /// <summary>True while a send is in flight (the connection waits for it before it closes).</summary>
    public bool IsSending
    {
        get
        {
            lock (Gate)
            {
                return _sending;
            }
        }
    }

    private void Send(ReadOnlySequence<byte> data)
    {
        while (true)
        {
            ValueTask send;
            try
            {
                send = _transport.SendAsync(data);
            }
            catch (Exception exception)
            {
                SendFailed(exception);
                return;
            }

            if (!send.IsCompleted)
            {
                // The client does not take the bytes as fast as they come: the minimum response data rate applies.
                _rates.SendStarted(data.Length);
                _pendingSend = send;
                send.ConfigureAwait(false).GetAwaiter().UnsafeOnCompleted(_onSendCompleted);
                return;
            }

            try
            {
                send.GetAwaiter().GetResult();
            }
            catch (Exception exception)
            {
                SendFailed(exception);
                return;
            }

            if (!SendCompleted(out data))
            {
                return;
            }
        }
    }

    private void OnSendCompleted()
    {
        ValueTask send = _pendingSend;
        _pendingSend = default;
        _rates.SendEnded();
        try
        {
            send.GetAwaiter().GetResult();
        }
        catch (Exception exception)
        {
            SendFailed(exception);
            return;
        }

        if (SendCompleted(out ReadOnlySequence<byte> next))
        {
            Send(next);
        }
    }

    /// <summary>Drops what was sent and wakes who waited for room; true with the next bytes to send when more were written meanwhile.</summary>
    private bool SendCompleted(out ReadOnlySequence<byte> next)
    {
        lock (Gate)
        {
            _chain.Consume(_inFlightEnd);
            if (!IsOverLimit)
            {
                _drained.Set();
            }

            WakeBlocked();
            if (_closed || _chain.Length == 0)
            {
                EndSendLocked();
                next = default;
                return false;
            }

            next = _chain.GetSequence();
            _inFlightEnd = next.End;
            return true;
        }
    }

    private void SendFailed(Exception exception)
    {
        lock (Gate)
        {
            EndSendLocked();
        }

        Close(exception);
    }

    /// <summary>Returns the empty tail block to the pool while the connection only waits (under <see cref="Gate"/>, nothing in flight).</summary>
    public void ReleaseIdleBlock()
    {
        lock (Gate)
        {
            if (!_sending && _chain.Length == 0)
            {
                _chain.Dispose();
            }
        }
    }

    /// <summary>
    /// Returns every block; called once the transport is disposed. A send still in flight keeps the blocks it carries until
    /// it ends (<see cref="EndSendLocked"/> returns them then).
    /// </summary>
    public void Dispose()
    {
        lock (Gate)
        {
            _closed = true;
            _disposed = true;
            if (!_sending)
            {
                _chain.Dispose();
            }
        }
    }

    /// <summary>The send in flight ended (under <see cref="Gate"/>): wakes who waits for it, and returns the blocks of a disposed output.</summary>
    private void EndSendLocked()
    {
        _sending = false;
        if (_disposed)
        {
            _chain.Dispose();
        }

        _sent.Set();
    }
}
