using System.Collections.Generic;

namespace Falconet.Generator.Planning;

/// <summary>
/// How one method is matched at the start of a request line: the method and the space after it, read as one
/// little-endian ulong when they fit in 8 bytes (masked to their length), else a full first ulong followed by
/// further exact chunks.
/// </summary>
internal sealed record MethodPlan(string Name, string Member, int Length, int MinimumSpan, EquatableArray<ByteChunk> Chunks);

/// <summary>A protocol version matched with a single 8-byte compare.</summary>
internal sealed record VersionPlan(string Text, string Member, ulong Value);

/// <summary>Plans the request-line matchers of <c>KnownMethods</c> and <c>KnownVersions</c>.</summary>
internal static class MethodPlanner
{
    public static MethodPlan PlanMethod(string name)
    {
        string text = name + " ";
        var chunks = new List<ByteChunk>();
        if (text.Length <= 8)
        {
            chunks.Add(new ByteChunk(0, 8, ByteChunks.FullMask(text.Length), ByteChunks.Pack(text, 0, text.Length)));
        }
        else
        {
            chunks.Add(new ByteChunk(0, 8, ulong.MaxValue, ByteChunks.Pack(text, 0, 8)));
            chunks.AddRange(ByteChunks.Exact(text, 8));
        }

        return new MethodPlan(name, MemberNames.ToPascalCase(name), name.Length, text.Length < 8 ? 8 : text.Length, EquatableArray.From(chunks));
    }

    public static VersionPlan PlanVersion(string text) =>
        new(text, MemberNames.ToPascalCase(text), ByteChunks.Pack(text, 0, 8));
}
