using System;
using System.Buffers.Binary;

namespace Falconet.Http.Http2;

/// <summary>The 9-octet header every frame starts with (RFC 9113 section 4.1).</summary>
internal readonly struct Http2FrameHeader
{
    /// <summary>The size of a frame header.</summary>
    public const int Size = 9;

    /// <summary>The largest frame payload the protocol allows (2^24-1), whatever SETTINGS_MAX_FRAME_SIZE says.</summary>
    public const int MaxPayloadLimit = (1 << 24) - 1;

    /// <summary>The SETTINGS_MAX_FRAME_SIZE every endpoint starts with, and the least it may be set to.</summary>
    public const int DefaultMaxFrameSize = 1 << 14;

    public Http2FrameHeader(int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
    {
        Length = length;
        Type = type;
        Flags = flags;
        StreamId = streamId;
    }

    /// <summary>The payload length (24 bits).</summary>
    public int Length { get; }

    public Http2FrameType Type { get; }

    public Http2FrameFlags Flags { get; }

    /// <summary>The stream identifier, its reserved bit ignored on receipt (section 4.1).</summary>
    public int StreamId { get; }

    public bool HasFlag(Http2FrameFlags flag) => (Flags & flag) != 0;

    /// <summary>Reads a header from the first <see cref="Size"/> bytes of <paramref name="source"/>.</summary>
    public static Http2FrameHeader Read(ReadOnlySpan<byte> source)
    {
        int length = (source[0] << 16) | (source[1] << 8) | source[2];
        int streamId = (int)(BinaryPrimitives.ReadUInt32BigEndian(source.Slice(5)) & 0x7FFF_FFFF);
        return new Http2FrameHeader(length, (Http2FrameType)source[3], (Http2FrameFlags)source[4], streamId);
    }

    /// <summary>Writes a header into the first <see cref="Size"/> bytes of <paramref name="destination"/>.</summary>
    public static void Write(Span<byte> destination, int length, Http2FrameType type, Http2FrameFlags flags, int streamId)
    {
        destination[0] = (byte)(length >> 16);
        destination[1] = (byte)(length >> 8);
        destination[2] = (byte)length;
        destination[3] = (byte)type;
        destination[4] = (byte)flags;
        BinaryPrimitives.WriteUInt32BigEndian(destination.Slice(5), (uint)streamId & 0x7FFF_FFFF);
    }
}
