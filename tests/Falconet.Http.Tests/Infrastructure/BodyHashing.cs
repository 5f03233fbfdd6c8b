using System;
using System.Buffers;
using System.Security.Cryptography;
using System.Text;
using System.Threading.Tasks;

namespace Falconet.Http.Tests.Infrastructure;

/// <summary>Handlers and helpers that prove request bodies arrive byte-exact: the server answers the SHA-256 of what it read.</summary>
internal static class BodyHashing
{
    public static string Sha256Hex(ReadOnlySpan<byte> data) => Convert.ToHexString(SHA256.HashData(data));

    public static byte[] RandomBytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>Reads the body through <see cref="RequestBodyReader"/> in odd-sized pieces and answers "{length} {sha256}".</summary>
    public static async ValueTask EchoHashWithReader(HttpContext context)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        byte[] buffer = ArrayPool<byte>.Shared.Rent(7001);
        long total = 0;
        try
        {
            int read;
            while ((read = await context.Request.BodyReader.ReadAsync(buffer.AsMemory(0, 7001))) > 0)
            {
                hash.AppendData(buffer, 0, read);
                total += read;
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        context.Response.Write(Encoding.ASCII.GetBytes($"{total} {Convert.ToHexString(hash.GetHashAndReset())}"));
    }

    /// <summary>Reads the body through the request <see cref="System.IO.Stream"/> and answers "{length} {sha256}".</summary>
    public static async ValueTask EchoHashWithStream(HttpContext context)
    {
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        var buffer = new byte[16 * 1024];
        long total = 0;
        int read;
        while ((read = await context.Request.Body.ReadAsync(buffer)) > 0)
        {
            hash.AppendData(buffer, 0, read);
            total += read;
        }

        context.Response.Write(Encoding.ASCII.GetBytes($"{total} {Convert.ToHexString(hash.GetHashAndReset())}"));
    }
}
