using System;
using System.IO;
using System.Threading;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>
/// A stream over another that writes in pieces of the given sizes (cycled) with a pause after each, so that TLS records
/// written through it reach the server in several receives, split at changing places (inside a header, in the body).
/// The inner stream stays its owner's to dispose.
/// </summary>
internal sealed class PieceStream(Stream inner, int[] pieces) : Stream
{
    private int _next;

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position
    {
        get => throw new NotSupportedException();
        set => throw new NotSupportedException();
    }

    public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) =>
        inner.ReadAsync(buffer, cancellationToken);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        inner.ReadAsync(buffer, offset, count, cancellationToken);

    public override void Write(byte[] buffer, int offset, int count)
    {
        var data = new ReadOnlySpan<byte>(buffer, offset, count);
        while (!data.IsEmpty)
        {
            int piece = Math.Min(data.Length, pieces[_next++ % pieces.Length]);
            inner.Write(data[..piece]);
            inner.Flush();
            data = data[piece..];
            Thread.Sleep(1);
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        while (!buffer.IsEmpty)
        {
            int piece = Math.Min(buffer.Length, pieces[_next++ % pieces.Length]);
            await inner.WriteAsync(buffer[..piece], cancellationToken);
            await inner.FlushAsync(cancellationToken);
            buffer = buffer[piece..];
            await Task.Delay(1, cancellationToken);
        }
    }

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) =>
        WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override void Flush() => inner.Flush();

    public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();
}
