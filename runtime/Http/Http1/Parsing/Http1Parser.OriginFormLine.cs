using System;
using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Falconet.Text;

namespace Falconet.Http.Http1;

public static partial class Http1Parser
{
    /// <summary>
    /// The common request line, settled from one 64-byte mask at its start: a known method other than CONNECT, an
    /// origin-form target without '#', and HTTP/1.0 or HTTP/1.1 exactly, all in <paramref name="span"/> and within
    /// <paramref name="max"/>. Returns the line's length once handed to the handler, or 0 for every other line (nothing
    /// handed on), which <see cref="ParseRequestLine"/> then parses and, if need be, rejects with the exact reason.
    /// </summary>
    /// <remarks>
    /// <see cref="HttpByteMasks.RequestTarget"/> marks the bytes that end a target (not VCHAR), '#' and '?': the target
    /// is the run of VCHARs after the method's SP, found with one bit count, and its query index is the first '?' bit
    /// inside it. A target longer than the mask continues mask by mask. <paramref name="data"/> is the span's bytes, or a
    /// copy in a buffer of at least one chunk: zero-filled past a span shorter than a chunk, or holding a whole line up to
    /// its LF. Either way a target ends within the bytes received, so what lies past them never decides anything.
    /// </remarks>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ParseOriginFormLine<T>(ref T handler, ReadOnlySpan<byte> span, ref byte data, int max)
        where T : struct, IHttpRequestLineHandler
    {
        KnownMethod method = KnownMethods.Match(span, out int methodLength);
        if (method < KnownMethod.Get || method == KnownMethod.Connect)
        {
            return 0;
        }

        int length = span.Length;
        int lastLoad = Math.Max(length, HttpByteMasks.Width) - HttpByteMasks.Width;
        int targetStart = methodLength + 1;
        int position = targetStart;
        int queryIndex = -1;
        int targetEnd = 0;
        while (true)
        {
            int load = Math.Min(position, lastLoad);
            ulong ends = HttpByteMasks.RequestTarget(ref Unsafe.Add(ref data, load), out ulong fragments, out ulong queries);
            ulong target = ulong.MaxValue << (position - load);
            ends &= target;
            if (ends != 0)
            {
                targetEnd = load + BitOperations.TrailingZeroCount(ends);
                target &= ends - 1;
            }

            if ((fragments & target) != 0)
            {
                return 0;
            }

            if (queryIndex < 0 && (queries & target) != 0)
            {
                queryIndex = load + BitOperations.TrailingZeroCount(queries & target) - targetStart;
            }

            if (ends != 0)
            {
                break;
            }

            position = load + HttpByteMasks.Width;
            if (position >= length || position > max)
            {
                return 0;
            }
        }

        // The target's end must be its SP, followed by the version, CR and LF, all received and within the limit.
        int version = targetEnd + 1;
        int lineLength = version + 10;
        if (targetEnd == targetStart || lineLength > length || lineLength > max
            || Unsafe.Add(ref data, targetEnd) != (byte)' ' || Unsafe.Add(ref data, targetStart) != (byte)'/'
            || Unsafe.Add(ref data, version + 8) != (byte)'\r' || Unsafe.Add(ref data, version + 9) != (byte)'\n')
        {
            return 0;
        }

        KnownVersion knownVersion = KnownVersions.Match(MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref data, version), 8));
        if (knownVersion == KnownVersion.None)
        {
            return 0;
        }

        handler.OnRequestLine(method, span[..methodLength],
            MemoryMarshal.CreateReadOnlySpan(ref Unsafe.Add(ref data, targetStart), targetEnd - targetStart),
            RequestTargetForm.Origin, queryIndex, knownVersion);
        return lineLength;
    }

    /// <summary><see cref="ParseOriginFormLine"/> for a span shorter than a chunk: on a zero-filled copy, whose zeros end any target.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private static int ParseShortOriginFormLine<T>(ref T handler, ReadOnlySpan<byte> span, int max)
        where T : struct, IHttpRequestLineHandler
    {
        Span<byte> copy = stackalloc byte[HttpByteMasks.Width];
        span.CopyTo(copy);
        copy[span.Length..].Clear();
        return ParseOriginFormLine(ref handler, span, ref MemoryMarshal.GetReference(copy), max);
    }
}
