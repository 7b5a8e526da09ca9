#include "fusefs/inode_table.h"

#include "fusefs/control_dir.h"

namespace graphfs {

InodeTable::InodeTable() : root_(std::make_unique<Inode>()), control_dir_(std::make_unique<Inode>()) {
  root_->nlookup = 2;  // never forgotten
  control_dir_->kind = Inode::Kind::kControlDir;
  control_dir_->nlookup = 2;
  for (const char* name : ControlFileNames()) {
    auto f = std::make_unique<Inode>();
    f->kind = Inode::Kind::kControlFile;
    f->control_name = name;
    f->nlookup = 2;
    control_files_[name] = std::move(f);
  }
}

InodeTable::~InodeTable() = default;

void InodeTable::SetRoot(UniqueFd fd, dev_t dev, ino_t ino) {
  root_->fd = std::move(fd);
  root_->dev = dev;
  root_->ino = ino;
}

Inode& InodeTable::Intern(std::unique_ptr<Inode> fresh) {
  std::lock_guard<std::mutex> lock(mu_);
  if (fresh->dev == root_->dev && fresh->ino == root_->ino) {
    root_->nlookup.fetch_add(1);
    return *root_;
  }
  auto key = std::make_pair(fresh->dev, fresh->ino);
  auto it = by_id_.find(key);
  if (it != by_id_.end()) {
    it->second->nlookup.fetch_add(1);
    return *it->second;
  }
  fresh->nlookup = 1;
  Inode& ref = *fresh;
  by_id_.emplace(key, std::move(fresh));
  return ref;
}

Inode* InodeTable::Find(dev_t dev, ino_t ino) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_id_.find({dev, ino});
  return it == by_id_.end() ? nullptr : it->second.get();
}

std::unique_ptr<Inode> InodeTable::Forget(Inode& inode, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (&inode == root_.get() || inode.kind != Inode::Kind::kBacked) return nullptr;
  uint64_t before = inode.nlookup.fetch_sub(n);
  if (before > n) return nullptr;
  auto it = by_id_.find({inode.dev, inode.ino});
  if (it == by_id_.end() || it->second.get() != &inode) return nullptr;
  std::unique_ptr<Inode> gone = std::move(it->second);
  by_id_.erase(it);
  return gone;
}

std::vector<std::unique_ptr<Inode>> InodeTable::TakeUnlinked() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::unique_ptr<Inode>> out;
  for (auto it = by_id_.begin(); it != by_id_.end();) {
    bool unlinked;
    {
      std::lock_guard<std::mutex> inode_lock(it->second->mu);
      unlinked = it->second->remove_parts;
    }
    if (unlinked) {
      out.push_back(std::move(it->second));
      it = by_id_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

Inode* InodeTable::Control(const std::string& name) {
  auto it = control_files_.find(name);
  return it == control_files_.end() ? nullptr : it->second.get();
}

size_t InodeTable::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return by_id_.size();
}

}  // namespace graphfs
