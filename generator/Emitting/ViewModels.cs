using System.Collections.Generic;

namespace Falconet.Generator.Emitting;

// Plain data handed to the templates: every value is already formatted text, so templates only place it.

/// <summary>Values shared by every emitted file.</summary>
public sealed class FileView
{
    public string GeneratorVersion { get; set; } = string.Empty;
    public string SchemaHash { get; set; } = string.Empty;
    public string Namespace { get; set; } = string.Empty;
    public string Visibility { get; set; } = string.Empty;
    public string Helpers { get; set; } = string.Empty;
}

/// <summary>Data of KnownMethods.g.cs.</summary>
public sealed class MethodsView
{
    public FileView File { get; set; } = new();
    public List<MethodView> Methods { get; } = new();
    public string TokenBytes { get; set; } = string.Empty;
}

/// <summary>One method of KnownMethods.g.cs.</summary>
public sealed class MethodView
{
    public string Member { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public string Length { get; set; } = string.Empty;
    public List<string> Lines { get; } = new();
}

/// <summary>Data of KnownVersions.g.cs.</summary>
public sealed class VersionsView
{
    public FileView File { get; set; } = new();
    public List<VersionView> Versions { get; } = new();
}

/// <summary>One version of KnownVersions.g.cs.</summary>
public sealed class VersionView
{
    public string Member { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public string Value { get; set; } = string.Empty;
    public string Comment { get; set; } = string.Empty;
}

/// <summary>Data of RequestHeaders.g.cs and ResponseHeaders.g.cs.</summary>
public sealed class HeadersView
{
    public FileView File { get; set; } = new();
    public string TypeName { get; set; } = string.Empty;
    public string Summary { get; set; } = string.Empty;
    public string BitCount { get; set; } = string.Empty;

    public bool HasContentLength { get; set; }
    public string ContentLengthName { get; set; } = "\"Content-Length\"";
    public List<HeaderView> Headers { get; } = new();
    public List<BucketView> Buckets { get; } = new();
    public List<string> BlobLines { get; } = new();
    public List<string> OffsetLines { get; } = new();
    public string OffsetType { get; set; } = "ushort";
    public string ContentLengthPrefix { get; set; } = string.Empty;
}

/// <summary>One bit-indexed header of a collection.</summary>
public sealed class HeaderView
{
    public string Name { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public string Property { get; set; } = string.Empty;
    public string Field { get; set; } = string.Empty;
    public string Index { get; set; } = string.Empty;
    public string Bit { get; set; } = string.Empty;
    public string KnownValues { get; set; } = string.Empty;
}

/// <summary>The headers of one name length.</summary>
public sealed class BucketView
{
    public string Length { get; set; } = string.Empty;
    public List<ReadView> Reads { get; } = new();
    public List<MatchView> Matches { get; } = new();
}

/// <summary>One chunk read shared by the headers of a bucket.</summary>
public sealed class ReadView
{
    public string Type { get; set; } = string.Empty;
    public string Variable { get; set; } = string.Empty;
    public string Bits { get; set; } = string.Empty;
    public string Offset { get; set; } = string.Empty;
}

/// <summary>The masked compares of one header in its bucket and the index it yields.</summary>
public sealed class MatchView
{
    public string Index { get; set; } = string.Empty;
    public string Literal { get; set; } = string.Empty;
    public List<string> Lines { get; } = new();
}
