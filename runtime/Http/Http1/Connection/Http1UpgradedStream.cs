using System;
using System.Buffers;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Http1;

/// <summary>
/// The connection after 101 Switching Protocols, as an opaque duplex stream: reads take the bytes already received after the
/// request head first, then receive from the transport; writes are sent at once. One read and one write may be pending at a
/// time, on different threads. A read returns 0 when the client closed its side (or the server aborted the connection);
/// cancelling a pending read or write aborts the connection, as for any transport operation. The minimum response data rate
/// applies to writes that wait for the client; no minimum applies to reads (an upgraded protocol may be idle for long).
/// </summary>
internal sealed class Http1UpgradedStream : Stream
{
    private readonly Http1Input _input;
    private readonly Http1OutputBuffer _output;

    public Http1UpgradedStream(Http1Input input, Http1OutputBuffer output)
    {
        _input = input;
        _output = output;
    }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_input.Buffered != 0)
        {
            return new ValueTask<int>(CopyBuffered(buffer.Span));
        }

        return ReceiveThenCopyAsync(buffer, cancellationToken);
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (buffer.IsEmpty)
        {
            return default;
        }

        _output.Write(buffer.Span);
        return _output.FlushAsync(cancellationToken);
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
    {
        ValidateBufferArguments(buffer, offset, count);
        return WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();
    }

    // Writes are sent as they are made: nothing is left to flush.
    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    // Blocking here could stall the very thread the bytes must arrive or leave on (a libuv loop, an I/O thread).
    public override int Read(byte[] buffer, int offset, int count)
        => throw new NotSupportedException("The upgraded connection reads asynchronously only: call ReadAsync.");

    public override void Write(byte[] buffer, int offset, int count)
        => throw new NotSupportedException("The upgraded connection writes asynchronously only: call WriteAsync.");

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    private async ValueTask<int> ReceiveThenCopyAsync(Memory<byte> buffer, CancellationToken cancellationToken)
    {
        // A zero-byte read waits for bytes without taking any.
        int received = await _input.ReceiveAsync(cancellationToken).ConfigureAwait(false);
        return received == 0 ? 0 : CopyBuffered(buffer.Span);
    }

    private int CopyBuffered(Span<byte> destination)
    {
        ReadOnlySequence<byte> buffered = _input.GetSequence();
        int count = (int)Math.Min(buffered.Length, destination.Length);
        ReadOnlySequence<byte> taken = buffered.Slice(0, count);
        taken.CopyTo(destination);
        _input.Consume(taken.End);
        return count;
    }
}
