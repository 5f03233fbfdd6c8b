using System;
using System.Buffers;
using System.Runtime.InteropServices;
using System.Threading;
using static Falconet.Transport.IoUring.IoUringNative;

namespace Falconet.Transport.IoUring;

// Sends, on the loop thread: small sends are staged (copied) and complete at once; larger ones go from the caller's memory,
// tried at once with sendmsg, and through the ring for what the socket did not take.
internal sealed unsafe partial class IoUringConnection
{
    /// <summary>The most buffers one gathered send hands the kernel (Linux's IOV_MAX); the rest goes after its completion.</summary>
    private const int MaxVectors = 1024;

    private StagingBlock? _staged;
    private byte* _stagedStart;
    private int _stagedRemaining;
    private MemoryHandle[] _sendPins = [];
    private int _sendPinCount;
    private IoVector* _vectors;
    private int _vectorCapacity;

    /// <summary>Copies <paramref name="buffers"/> into the loop's staging area and submits it; the send is done for its caller.</summary>
    private void StageOnLoop(in ReadOnlySequence<byte> buffers)
    {
        _staged = _loop.Staging.Stage(buffers, out _stagedStart);
        _stagedRemaining = (int)buffers.Length;
        SubmitStaged();
    }

    private void SubmitStaged()
    {
        Sqe* sqe = _loop.Submit(this, OpSend);
        sqe->Opcode = OpcodeSend;
        sqe->Fd = _fd;
        sqe->Address = (ulong)_stagedStart;
        sqe->Length = (uint)_stagedRemaining;
        sqe->OperationFlags = MsgNoSignal;
        _sendInFlight = true;
        _operationsInFlight++;
    }

    /// <summary>Starts the caller's pending send unless another is in the kernel (its completion starts this one).</summary>
    private protected override void SendOnLoop()
    {
        if (!_sendPending || _sendInFlight)
        {
            return;
        }

        if (_closing)
        {
            CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
            return;
        }

        if (_sendError is { } failed)
        {
            CompleteSend(failed);
            return;
        }

        if (_sendBuffers.Length <= IoUringSendStaging.Limit)
        {
            StageOnLoop(_sendBuffers);
            _sendBuffers = default;
            CompleteSend(null);
            return;
        }

        if (!(_loop.SendsAtOnce && SendNowOnLoop()))
        {
            SubmitSendOnLoop();
        }
    }

    /// <summary>
    /// Sends the caller's bytes at once with a non-blocking <c>sendmsg</c>, as libuv's <c>uv_try_write</c> does: true when
    /// that finished the send (every byte taken, or a failure), false when the socket took only part or nothing (its
    /// buffer is full), and the ring sends the rest.
    /// </summary>
    /// <remarks>
    /// Why not the ring: a send submitted with the turn's batch keeps its blocks until the completion is reaped in the next
    /// turn, so every connection of a turn holds its response's blocks meanwhile and the next records are written into
    /// blocks that have left the cache. Sent at once, the blocks go back to the pool and are written again while hot:
    /// an HTTPS 64 KiB response copied its records into blocks 3.7 times slower per byte on the ring than on libuv
    /// (perf, same run). Sends of a block or less keep going with the turn's batch (staged).
    /// </remarks>
    private bool SendNowOnLoop()
    {
        while (true)
        {
            int count = FillVectors(_sendBuffers, out long total);
            MessageHeader message = default;
            message.Vectors = _vectors;
            message.VectorCount = (nuint)count;
            nint sent = SendMessageNow(_fd, &message);
            ReleaseSendPins();
            if (sent == -EAGAIN || sent == -EINTR)
            {
                // Nothing taken: the ring waits for room (or tries again).
                return false;
            }

            if (sent <= 0)
            {
                CompleteSend(SendError((int)sent));
                return true;
            }

            _sendBuffers = _sendBuffers.Slice(sent);
            if (_sendBuffers.IsEmpty)
            {
                CompleteSend(null);
                return true;
            }

            if (sent < total)
            {
                // The socket's buffer is full: the ring waits for room and sends the rest.
                return false;
            }
        }
    }

    /// <summary>Submits what is left of the caller's send from its own memory, pinned until the completion.</summary>
    private void SubmitSendOnLoop()
    {
        ReadOnlySequence<byte> data = _sendBuffers;
        Sqe* sqe = _loop.Submit(this, OpSend);
        sqe->Fd = _fd;
        sqe->OperationFlags = MsgNoSignal;
        if (data.IsSingleSegment)
        {
            ReadOnlyMemory<byte> segment = data.First;
            sqe->Opcode = OpcodeSend;
            sqe->Address = (ulong)PinForSend(segment);
            sqe->Length = (uint)segment.Length;
        }
        else
        {
            int count = FillVectors(data, out _);
            _native->Message = default;
            _native->Message.Vectors = _vectors;
            _native->Message.VectorCount = (nuint)count;
            sqe->Opcode = OpcodeSendMsg;
            sqe->Address = (ulong)&_native->Message;
            sqe->Length = 1;
        }

        _sendInFlight = true;
        _operationsInFlight++;
    }

    private void OnSendCompleted(int result)
    {
        _sendInFlight = false;
        _operationsInFlight--;
        if (_staged is { } staged)
        {
            if (result > 0 && result < _stagedRemaining && !_reset)
            {
                // Part went out (the socket buffer filled up): the rest follows from the same place.
                _stagedStart += result;
                _stagedRemaining -= result;
                SubmitStaged();
                return;
            }

            _staged = null;
            _loop.Staging.Release(staged);
            if (result <= 0)
            {
                // Its caller has moved on: the next send (or none) reports it.
                Volatile.Write(ref _sendError, SendError(result));
            }

            SendOnLoop();
        }
        else
        {
            ReleaseSendPins();
            if (result <= 0)
            {
                CompleteSend(SendError(result));
            }
            else
            {
                _sendBuffers = _sendBuffers.Slice(result);
                if (_sendBuffers.IsEmpty)
                {
                    CompleteSend(null);
                }
                else if (_closing)
                {
                    CompleteSend(new ConnectionAbortedException("The connection was aborted or disposed."));
                }
                else
                {
                    SubmitSendOnLoop();
                }
            }
        }

        if (_shutdownPending && !_sendInFlight && !_sendPending)
        {
            ShutdownSendOnLoop();
        }
    }

    private static Exception SendError(int result) => result switch
    {
        -ECANCELED => new ConnectionAbortedException("The connection was aborted or disposed."),
        -EPIPE or -ECONNRESET => new ConnectionResetException("The peer reset the connection.", new IoUringException("send", -result)),

        // A stream socket's send returns 0 only when the connection can take nothing more.
        0 => new ConnectionResetException("The peer reset the connection.", new IoUringException("send", EPIPE)),
        _ => new IoUringException("send", -result),
    };

    /// <summary>
    /// Fills the connection's iovec array with the non-empty segments of <paramref name="data"/>, each pinned until
    /// <see cref="ReleaseSendPins"/>, at most <see cref="MaxVectors"/>; returns how many, and their bytes in <paramref name="total"/>.
    /// </summary>
    private int FillVectors(in ReadOnlySequence<byte> data, out long total)
    {
        int count = 0;
        total = 0;
        foreach (ReadOnlyMemory<byte> segment in data)
        {
            if (segment.IsEmpty)
            {
                continue;
            }

            if (count == MaxVectors)
            {
                break;
            }

            EnsureVectors(count + 1);
            _vectors[count].Base = PinForSend(segment);
            _vectors[count].Length = (nuint)segment.Length;
            total += segment.Length;
            count++;
        }

        return count;
    }

    private byte* PinForSend(ReadOnlyMemory<byte> segment)
    {
        if (_sendPinCount == _sendPins.Length)
        {
            Array.Resize(ref _sendPins, Math.Max(4, _sendPins.Length * 2));
        }

        MemoryHandle handle = segment.Pin();
        _sendPins[_sendPinCount++] = handle;
        return (byte*)handle.Pointer;
    }

    private void ReleaseSendPins()
    {
        for (int i = 0; i < _sendPinCount; i++)
        {
            _sendPins[i].Dispose();
            _sendPins[i] = default;
        }

        _sendPinCount = 0;
    }

    private void EnsureVectors(int count)
    {
        if (count > _vectorCapacity)
        {
            int capacity = Math.Min(MaxVectors, Math.Max(count, _vectorCapacity * 2));
            _vectors = (IoVector*)NativeMemory.Realloc(_vectors, (nuint)(capacity * sizeof(IoVector)));
            _vectorCapacity = capacity;
        }
    }
}
